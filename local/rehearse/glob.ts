/**
 * The wildcard patterns of templates (a Lambda permission's SourceArn, a CloudFront behavior's
 * path pattern, a bucket deployment's include/exclude): `*` any run of characters, `?` one.
 */
export const globPattern = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
