/** The function's environment (functions/platform/env.ts): defaults, coercion and the errors that name a variable. */
import { env, rateLimitSettings, reloadEnvForTests } from '../../functions/platform/env.js';

const saved = process.env;

function envFrom(variables: Record<string, string>) {
  process.env = { ...variables };
  reloadEnvForTests();
  return env();
}

afterEach(() => {
  process.env = saved;
  reloadEnvForTests();
});

describe('env()', () => {
  it('applies the defaults and reads numbers from text', () => {
    const e = envFrom({ TABLE_NAME: 't', CONFIG_CACHE_MS: '0', SSE_WARM_MS: '250', AWS_REGION: '' });
    expect(e).toMatchObject({
      TABLE_NAME: 't',
      AWS_REGION: 'us-east-1',
      CONFIG_CACHE_MS: 0,
      PUSH_TIMEOUT_MS: 5_000,
      SSE_WARM_MS: 250,
      SSE_WRITE_BELL: 'on',
      EXPOSE_USAGE_HEADERS: '0',
      SERVICE_VERSION: '0.1.0',
    });
    expect(e.SSE_LIFETIME_MS).toBeUndefined();
  });

  it('parses AUTO_RENAME_BASE_URLS as JSON', () => {
    const e = envFrom({ TABLE_NAME: 't', AUTO_RENAME_BASE_URLS: '{"openai":"http://127.0.0.1:9/openai"}' });
    expect(e.AUTO_RENAME_BASE_URLS).toEqual({ openai: 'http://127.0.0.1:9/openai' });
  });

  it.each([
    [{}, 'TABLE_NAME is not set'],
    [{ TABLE_NAME: 't', CONFIG_CACHE_MS: '-1' }, 'CONFIG_CACHE_MS is invalid (Too small: expected number to be >=0)'],
    [
      { TABLE_NAME: 't', PUSH_TIMEOUT_MS: '1.5' },
      'PUSH_TIMEOUT_MS is invalid (Invalid input: expected int, received number)',
    ],
    [{ TABLE_NAME: 't', DYNAMODB_ENDPOINT: 'nope' }, 'DYNAMODB_ENDPOINT is invalid (Invalid URL)'],
    [
      { TABLE_NAME: 't', SSE_WRITE_BELL: 'maybe' },
      'SSE_WRITE_BELL is invalid (Invalid option: expected one of "on"|"off")',
    ],
    [
      { TABLE_NAME: 't', AUTO_RENAME_BASE_URLS: '{"openai":"nope"}' },
      'AUTO_RENAME_BASE_URLS.openai is invalid (Invalid URL)',
    ],
  ])('refuses %j naming the variable', (variables, problem) => {
    expect(() => envFrom(variables as Record<string, string>)).toThrow(
      `The function's environment is incomplete: ${problem}`,
    );
  });

  it('names every missing and malformed variable in one error', () => {
    const problem = (() => {
      try {
        envFrom({ CONFIG_CACHE_MS: '-1', SSE_WRITE_BELL: 'maybe' });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected the environment to be refused');
    })();
    expect(problem).toContain('TABLE_NAME is not set');
    expect(problem).toContain('CONFIG_CACHE_MS is invalid');
    expect(problem).toContain('SSE_WRITE_BELL is invalid');
    // The failure stays until the environment is read again, as in a container started without it.
    expect(() => env()).toThrow(problem);
  });

  it.each([
    [{}, { max: 100, windowMs: 1000, trustProxyHeaders: false }],
    [
      {
        OPENGRAM_WRITE_RATE_LIMIT_MAX: '5.9',
        OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS: '250',
        OPENGRAM_TRUST_PROXY_HEADERS: 'Yes',
      },
      { max: 5, windowMs: 250, trustProxyHeaders: true },
    ],
    [
      {
        OPENGRAM_WRITE_RATE_LIMIT_MAX: '0',
        OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS: 'soon',
        OPENGRAM_TRUST_PROXY_HEADERS: 'on',
      },
      { max: 100, windowMs: 1000, trustProxyHeaders: false },
    ],
  ])('reads the write rate limit from %j (a value below 1 takes the default)', (variables, settings) => {
    envFrom({ TABLE_NAME: 't', ...variables });
    expect(rateLimitSettings()).toEqual(settings);
  });
});
