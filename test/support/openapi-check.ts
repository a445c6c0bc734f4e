/**
 * Every answer the integration suite receives, checked against the OpenAPI document the API
 * publishes (issue 35 item 2): the operation must list the status, the body must be of a media
 * type the document gives for it and, when JSON, valid against its schema. So a reply and the
 * document can no longer drift: a field a handler adds, drops or renames, a status it newly
 * answers, fails the test that saw it. Likewise every body a test's webhook receiver gets, against
 * the document's `webhooks` (webhookProblem).
 *
 * The shared client (api.ts) runs the check on each answer; a file's problems are also kept,
 * and useApi's afterAll fails the file on any, so a test that catches a client error cannot
 * hide one. Answers to paths the document does not describe (unknown routes, preflights) are
 * checked against the error envelope when they are JSON errors, and otherwise left alone.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import formats from 'ajv-formats';

// A CommonJS module: its function is the default export's `default`.
const addFormats = formats.default;

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, { post?: unknown }>;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

const DOCUMENT_ID = 'openapi.json';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

/** A JSON pointer's segment, as a URI fragment carries it. */
const segment = (s: string): string => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'));

export class DocumentCheck {
  private readonly ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  /** Each path template as a pattern, literal segments first (`/chats/search` before `/chats/{chatId}`). */
  private readonly templates: { template: string; pattern: RegExp; params: number }[];

  constructor(private readonly doc: Document) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, DOCUMENT_ID);
    this.templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        pattern: new RegExp(
          `^${template
            .split(/\{\w+\}/)
            .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
            .join('[^/]+')}$`,
        ),
        params: (template.match(/\{\w+\}/g) ?? []).length,
      }))
      .sort((a, b) => a.params - b.params);
  }

  /** What is wrong with this answer, or undefined. */
  problem(method: string, url: string, answer: Answer): string | undefined {
    const path = new URL(url, 'http://api.test').pathname;
    const verb = method.toLowerCase();
    const what = `${method} ${path} answered ${answer.status}`;
    const found = METHODS.has(verb)
      ? this.templates.find(({ template, pattern }) => pattern.test(path) && this.doc.paths[template]![verb])
      : undefined;
    if (!found) {
      // Not a documented operation: its JSON errors are still the one envelope.
      if (answer.status >= 400 && isJsonType(mediaTypeOf(answer)))
        return this.validate(`${DOCUMENT_ID}#/components/schemas/ErrorEnvelope`, `${what}: `, answer.body);
      return undefined;
    }
    const responses = this.doc.paths[found.template]![verb]!.responses;
    const key = String(answer.status) in responses ? String(answer.status) : 'default';
    const response = responses[key];
    if (!response)
      return `${what}, which the document does not list for ${verb.toUpperCase()} ${found.template} (it lists ${Object.keys(responses).join(', ')})`;
    const type = mediaTypeOf(answer);
    const content = response.content;
    if (!content) {
      if (answer.text !== '')
        return `${what} with a ${type || 'typeless'} body, where the document gives this answer no content`;
      return undefined;
    }
    const listed = Object.keys(content).find((media) => mediaMatches(media, type));
    if (!listed)
      return `${what} as ${type || 'no content type'}, where the document gives ${Object.keys(content).join(', ')}`;
    if (!isJsonType(listed) || content[listed]!.schema === undefined) return undefined;
    const pointer = ['paths', found.template, verb, 'responses', key, 'content', listed, 'schema']
      .map(segment)
      .join('/');
    return this.validate(`${DOCUMENT_ID}#/${pointer}`, `${what} (${found.template}): `, answer.body);
  }

  /** What is wrong with a webhook's body (§6.6), by the document's webhook for its `type`, or undefined. */
  webhookProblem(body: unknown): string | undefined {
    const type = (body as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !this.doc.webhooks?.[type]?.post)
      return `a webhook body of type ${JSON.stringify(type)}, which the document's webhooks do not describe`;
    const pointer = ['webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema']
      .map(segment)
      .join('/');
    return this.validate(`${DOCUMENT_ID}#/${pointer}`, `the ${type} webhook: `, body);
  }

  private validate(ref: string, prefix: string, body: unknown): string | undefined {
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    if (validate(body)) return undefined;
    const errors = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
    return `${prefix}the body does not match the document: ${errors.join('; ')}`;
  }
}

/** The answer's media type, lower-cased, without parameters ('' when it has none). */
const mediaTypeOf = (answer: Answer): string =>
  (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();

const isJsonType = (type: string): boolean => type === 'application/json' || type.endsWith('+json');

function mediaMatches(listed: string, type: string): boolean {
  if (listed === '*/*' || listed === type) return true;
  return listed.endsWith('/*') && type.startsWith(listed.slice(0, -1));
}

/** What this test file's answers did wrong, for useApi's afterAll. */
export const documentProblems: string[] = [];

/**
 * The published document: on the rehearsal, the one the synth wrote into the doc function's
 * asset; on the sources, the one the run's global setup wrote once with the same generator
 * (global-setup.mjs; GET /api/v1/doc serves the same, answers-checked.test.ts compares them).
 */
export function publishedDocumentFile(): string {
  const assembly = process.env.RELAY_TEST_REHEARSAL === '1' ? process.env.REHEARSAL_ASSEMBLY : undefined;
  if (assembly) {
    const asset = readdirSync(assembly).find((dir) => existsSync(join(assembly, dir, 'openapi.json')));
    if (!asset) throw new Error(`No function asset of ${assembly} holds openapi.json`);
    return join(assembly, asset, 'openapi.json');
  }
  const file = process.env.TEST_OPENAPI_DOCUMENT;
  if (!file) throw new Error('TEST_OPENAPI_DOCUMENT is not set: run the integration tests through jest (globalSetup).');
  return file;
}

let check: DocumentCheck | undefined;
/** The check, built on first use in this file. */
const documentCheck = (): DocumentCheck =>
  (check ??= new DocumentCheck(JSON.parse(readFileSync(publishedDocumentFile(), 'utf8')) as Document));

/** What is wrong with one answer of the API, by the published document. */
export const answerProblem = (method: string, path: string, answer: Answer): string | undefined =>
  documentCheck().problem(method, path, answer);

/** What is wrong with a body a webhook received, by the published document's `webhooks`. */
export const webhookProblem = (body: unknown): string | undefined => documentCheck().webhookProblem(body);

/** Checks one answer: throws with its problem, and keeps it for the file's final check. */
export function checkAnswer(method: string, path: string, answer: Answer): void {
  const problem = answerProblem(method, path, answer);
  if (problem) {
    documentProblems.push(problem);
    throw new Error(`The answer does not match the OpenAPI document: ${problem}`);
  }
}
