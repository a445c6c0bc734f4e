/**
 * The CI deploy workflow (.github/workflows/deploy.yml) as text: `npm run lint` validates it
 * against GitHub's workflow schema (@action-validator/cli); these checks pin what the schema
 * cannot: it runs the README's test command before anything deploys, it assumes the roles of
 * lib/deploy-role-stack.ts through OIDC and holds no AWS key, and it deploys and diffs the app
 * stack by name.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';

const workflow = readFileSync(new URL('../../.github/workflows/deploy.yml', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The text of one job: from its key to the next job's key (or the end). */
function job(name: string): string {
  const start = workflow.indexOf(`\n  ${name}:\n`);
  expect([name, start]).not.toEqual([name, -1]);
  const next = workflow.slice(start + 1).search(/\n {2}[a-z-]+:\n/);
  return next === -1 ? workflow.slice(start) : workflow.slice(start, start + 1 + next);
}

describe('deploy workflow', () => {
  it("runs the README's test command, with the Java DynamoDB Local needs", () => {
    expect(readme).toContain('npm test         # typecheck, lint');
    const test = job('test');
    expect(test).toContain('run: npm ci');
    expect(test).toContain('run: npm test');
    expect(test).toMatch(/actions\/setup-java@v\d+[\s\S]*java-version: '17'/);
  });

  it('diffs pull requests and deploys main only after the tests, each through its OIDC role', () => {
    const diff = job('diff');
    const deploy = job('deploy');
    for (const [text, role] of [
      [diff, 'AWS_DIFF_ROLE_ARN'],
      [deploy, 'AWS_DEPLOY_ROLE_ARN'],
    ] as const) {
      expect(text).toContain('needs: test');
      expect(text).toContain('id-token: write');
      expect(text).toMatch(/aws-actions\/configure-aws-credentials@v\d+/);
      expect(text).toContain(`role-to-assume: \${{ vars.${role} }}`);
    }
    expect(diff).toContain("github.event_name == 'pull_request'");
    expect(diff).toContain('run: npx cdk diff ChatRelay --method=template $CDK_CONTEXT');
    expect(deploy).toContain("github.ref == 'refs/heads/main'");
    expect(deploy).toContain('run: npx cdk deploy ChatRelay --ci --require-approval never');
  });

  it('holds no long-lived AWS key and grants the token write only where a role is assumed', () => {
    expect(workflow).not.toMatch(/aws-access-key-id|aws-secret-access-key|AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY/);
    expect(workflow).not.toMatch(/secrets\./);
    expect(workflow.split('\n').filter((line) => line.includes('id-token: write'))).toHaveLength(2);
    expect(workflow).toMatch(/^permissions:\n {2}contents: read\n/m);
  });
});
