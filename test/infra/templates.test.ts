/**
 * The stack's CloudFormation templates (issue 34, "Room"): the root and one nested stack per area of
 * the API (lib/constructs/api-area.ts). CloudFormation refuses a template above 500 resources; every
 * template stays at most TEMPLATE_RESOURCE_CEILING, and 40 more endpoints still fit under
 * ROOM_CEILING in the template they would land in. An existing deployment updates in place: the
 * stateful resources and the API's routes keep their logical ids in the root template.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_AREAS, apiAreaOf, apiRoutes } from '../../lib/routes.js';
import { areaStackId } from '../../lib/constructs/api-area.js';
import { NESTED_STACK_MARK } from '../../lib/deploy-role-stack.js';
import { cdkPath, refId, resourcesOfType, synthesize } from './synth.js';
import type { Synthesized, TemplateFile } from './synth.js';
import { TEMPLATE_RESOURCE_CEILING } from './quotas.js';

/** The room to keep: ENDPOINTS_AHEAD more endpoints, all in the fullest area, under this. */
const ROOM_CEILING = 450;
const ENDPOINTS_AHEAD = 40;

/** The route keys and logical ids of the last single-template stack (routes may never change id: api-area.ts). */
const routeIds = JSON.parse(
  readFileSync(new URL('./fixtures/route-logical-ids.json', import.meta.url), 'utf8'),
) as Record<string, string>;

let synth: Synthesized;
let root: TemplateFile;
let areas: TemplateFile[];
const count = (t: TemplateFile) => Object.keys(t.json.Resources).length;
const routesOf = (t: TemplateFile) =>
  apiRoutes.filter((route) => t.path === `ChatRelay/Api/${areaStackId(apiAreaOf(route))}`);

beforeAll(() => {
  synth = synthesize();
  root = synth.templates[0]!;
  areas = synth.templates.slice(1);
  console.log(
    'templates (resources, parameters, outputs):\n' +
      synth.templates
        .map(
          (t) =>
            `  ${t.path}: ${count(t)}, ${Object.keys(t.json.Parameters ?? {}).length}, ` +
            `${Object.keys(t.json.Outputs ?? {}).length}  (${t.file})`,
        )
        .join('\n'),
  );
}, 300_000);

afterAll(() => synth?.dispose());

describe('templates', () => {
  it('has the root and one nested stack per area of the API, each a plain nested stack of the root', () => {
    expect(root.file).toBe('ChatRelay.template.json');
    expect(areas.map((t) => t.path).sort()).toEqual(API_AREAS.map((a) => `ChatRelay/Api/${areaStackId(a)}`).sort());
    for (const area of areas) {
      expect(root.json.Resources[area.nestedAs!]?.Type).toBe('AWS::CloudFormation::Stack');
      expect(area.file).toMatch(/\.nested\.template\.json$/);
      // The CI roles may read the nested stacks by this mark in their names (lib/deploy-role-stack.ts).
      expect(area.nestedAs).toContain(NESTED_STACK_MARK);
    }
  });

  it(`holds at most ${TEMPLATE_RESOURCE_CEILING} resources in any template (CloudFormation refuses above 500)`, () => {
    const over = synth.templates
      .filter((t) => count(t) > TEMPLATE_RESOURCE_CEILING)
      .map((t) => `${t.path}: ${count(t)}`);
    expect(over).toEqual([]);
    // And today at most 300 (issue 34).
    expect(Math.max(...synth.templates.map(count))).toBeLessThanOrEqual(300);
  });

  it(`has room for ${ENDPOINTS_AHEAD} more endpoints under ${ROOM_CEILING} in the template they would land in`, () => {
    // An endpoint costs each area the same: its function, role, policy, log group, permission and
    // integration, and nothing else grows with the area (no per-area resource).
    const perEndpoint = new Set(areas.map((t) => count(t) / routesOf(t).length));
    expect([...perEndpoint]).toEqual([6]);
    const [nestedCost] = [...perEndpoint] as [number];
    // The root holds each endpoint's route (and nothing else of it).
    const rootRoutes = resourcesOfType(root.json, 'AWS::ApiGatewayV2::Route').length;
    expect(rootRoutes).toBe(apiRoutes.length + 1); // and $default
    const rootCost = 1;
    // Worst case: every new endpoint in the fullest area (a new area adds one nested stack resource to the root).
    const fullest = Math.max(...areas.map(count));
    const rootAfter = count(root) + ENDPOINTS_AHEAD * rootCost + 1;
    const areaAfter = fullest + ENDPOINTS_AHEAD * nestedCost;
    console.log(
      `per endpoint: ${nestedCost} in its area + ${rootCost} in the root; after ${ENDPOINTS_AHEAD} more: ` +
        `fullest area ${fullest} → ${areaAfter}, root ${count(root)} → ${rootAfter} (ceiling ${ROOM_CEILING})`,
    );
    expect(areaAfter).toBeLessThanOrEqual(ROOM_CEILING);
    expect(rootAfter).toBeLessThanOrEqual(ROOM_CEILING);
  });

  it("puts in each area's stack exactly its routes' functions, roles, policies, log groups, permissions and integrations", () => {
    for (const area of areas) {
      const types = Object.values(area.json.Resources).map((r) => r.Type);
      const per = (type: string) => types.filter((t) => t === type).length;
      const n = routesOf(area).length;
      expect(n).toBeGreaterThan(0);
      for (const type of [
        'AWS::Lambda::Function',
        'AWS::IAM::Role',
        'AWS::IAM::Policy',
        'AWS::Logs::LogGroup',
        'AWS::Lambda::Permission',
        'AWS::ApiGatewayV2::Integration',
      ]) {
        expect([area.path, type, per(type)]).toEqual([area.path, type, n]);
      }
    }
  });

  it('keeps parameters and outputs of every template far below CloudFormation’s 200 each', () => {
    for (const t of synth.templates) {
      expect([t.path, Object.keys(t.json.Parameters ?? {}).length <= 40]).toEqual([t.path, true]);
      expect([t.path, Object.keys(t.json.Outputs ?? {}).length <= 40]).toEqual([t.path, true]);
    }
  });

  it("passes an area only references to the root's own resources, as parameters named referenceto…", () => {
    for (const area of areas) {
      const passed = (root.json.Resources[area.nestedAs!]!.Properties?.Parameters ?? {}) as Record<string, unknown>;
      expect(Object.keys(passed).sort()).toEqual(Object.keys(area.json.Parameters ?? {}).sort());
      for (const [name, value] of Object.entries(passed)) {
        expect(name).toMatch(/^referenceto[A-Za-z0-9]+(Ref|Arn)$/);
        expect([name, root.json.Resources[refId(value) ?? '']?.Type]).toEqual([name, expect.any(String)]);
      }
      // The flattened stack (synth.ts) shows what CloudFormation passes: no parameter left in it.
      for (const [id] of Object.entries(area.json.Resources)) {
        expect(JSON.stringify(synth.json.Resources[id])).not.toMatch(/"Ref":"referenceto/);
      }
    }
  });
});

describe('an existing deployment updates in place', () => {
  it('keeps the table and the media and search buckets in the root template, with their ids and retention', () => {
    const pinned = {
      StorageTableB43FDCE7: 'AWS::DynamoDB::Table',
      MediaBucket4022EBBF: 'AWS::S3::Bucket',
      SearchBucketDC7A81AD: 'AWS::S3::Bucket',
    };
    for (const [id, type] of Object.entries(pinned)) {
      const resource = root.json.Resources[id];
      expect([id, resource?.Type, resource?.DeletionPolicy, resource?.UpdateReplacePolicy]).toEqual([
        id,
        type,
        'Retain',
        'Retain',
      ]);
    }
    expect(root.json.Resources.StorageTableB43FDCE7!.Properties?.DeletionProtectionEnabled).toBe(true);
    // No other table or bucket of those paths anywhere (a copy in a nested stack would be a new, empty one).
    for (const area of areas) {
      expect(resourcesOfType(area.json, 'AWS::DynamoDB::Table')).toEqual([]);
      expect(resourcesOfType(area.json, 'AWS::S3::Bucket')).toEqual([]);
    }
  });

  it('keeps every route in the root template under the logical id it had (API Gateway refuses a second route of a key)', () => {
    const now = Object.fromEntries(
      resourcesOfType(root.json, 'AWS::ApiGatewayV2::Route').map(([id, r]) => [r.Properties?.RouteKey as string, id]),
    );
    for (const [key, id] of Object.entries(routeIds)) expect([key, now[key]]).toEqual([key, id]);
    // A route added since keeps the path (hence the id) the HTTP API gives its routes.
    for (const [key, id] of Object.entries(now)) {
      if (key === '$default') continue;
      const [method, path] = key.split(' ');
      expect(cdkPath(root.json.Resources[id]!)).toBe(
        `ChatRelay/Api/HttpApi/${method}${path!.replaceAll('/', '--')}/Resource`,
      );
    }
    for (const area of areas) expect(resourcesOfType(area.json, 'AWS::ApiGatewayV2::Route')).toEqual([]);
  });
});
