/**
 * Changes to a synthesized assembly, for the tests that show the rehearsal failing the way AWS
 * would: a copy of the assembly's templates (its asset folders linked, not copied) in which one
 * route's function loses a grant or a variable, or a route disappears.
 */
import { cpSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Assembly } from '../../local/rehearse/assembly.js';

export function copyAssembly(dir: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'chat-relay-assembly-copy-'));
  for (const name of readdirSync(dir)) {
    if (name.startsWith('asset.')) symlinkSync(join(dir, name), join(copy, name));
    else cpSync(join(dir, name), join(copy, name), { recursive: true });
  }
  return copy;
}

/** Where a route's function is defined: its template and logical id, found through the route's integration. */
export function routeFunction(dir: string, routeKey: string): { stack: string; logicalId: string; assembly: Assembly } {
  const assembly = new Assembly(dir);
  const route = assembly.resources('AWS::ApiGatewayV2::Route').find((r) => r.properties.RouteKey === routeKey);
  if (!route) throw new Error(`No route ${routeKey} in ${dir}.`);
  const integrationId = String(route.properties.Target).replace(/^integrations\//, '');
  const integration = assembly
    .resources('AWS::ApiGatewayV2::Integration')
    .find((i) => assembly.ref(i.stack, i.logicalId) === integrationId);
  const arn = String(integration?.properties.IntegrationUri);
  const fn = assembly
    .rawResources('AWS::Lambda::Function')
    .find((f) => assembly.attribute(f.stack, f.logicalId, 'Arn') === arn);
  if (!fn) throw new Error(`Route ${routeKey}: no function for ${arn}.`);
  return { stack: fn.stack, logicalId: fn.logicalId, assembly };
}

type Template = { Resources: Record<string, { Type: string; Properties: Record<string, any> }> };

function edit(assembly: Assembly, stack: string, change: (template: Template) => void): void {
  const file = assembly.templateFile(stack);
  const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
  change(template);
  writeFileSync(file, JSON.stringify(template));
}

/** Removes, from the policy of a route's function's role, every statement allowing `action`. */
export function removeGrant(dir: string, routeKey: string, action: string): void {
  const { stack, logicalId, assembly } = routeFunction(dir, routeKey);
  const roleId = (assembly.definition(stack, logicalId).Properties?.Role as { 'Fn::GetAtt': [string] })[
    'Fn::GetAtt'
  ][0];
  edit(assembly, stack, (template) => {
    let removed = 0;
    for (const resource of Object.values(template.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      if (!resource.Properties.Roles.some((r: { Ref?: string }) => r.Ref === roleId)) continue;
      const statements = resource.Properties.PolicyDocument.Statement as {
        Effect: string;
        Action: string | string[];
      }[];
      resource.Properties.PolicyDocument.Statement = statements.filter((s) => {
        const allows = s.Effect === 'Allow' && [s.Action].flat().includes(action);
        if (allows) removed++;
        return !allows;
      });
    }
    if (removed === 0) throw new Error(`${routeKey}: no statement of its role allows ${action}.`);
  });
}

/** Removes one variable from a route's function's environment. */
export function removeVariable(dir: string, routeKey: string, name: string): void {
  const { stack, logicalId, assembly } = routeFunction(dir, routeKey);
  edit(assembly, stack, (template) => {
    const variables = template.Resources[logicalId]!.Properties.Environment.Variables as Record<string, unknown>;
    if (!(name in variables)) throw new Error(`${routeKey}: its function has no ${name}.`);
    delete variables[name];
  });
}

/** Removes a route (the route resource only: its function, integration and permission stay). */
export function removeRoute(dir: string, routeKey: string): void {
  const assembly = new Assembly(dir);
  const route = assembly.rawResources('AWS::ApiGatewayV2::Route').find((r) => r.raw.Properties?.RouteKey === routeKey);
  if (!route) throw new Error(`No route ${routeKey}.`);
  edit(assembly, route.stack, (template) => {
    delete template.Resources[route.logicalId];
  });
}
