/** The `{mediaId}` path parameter of the media and file routes. Any string; unknown ids are 404. */
import * as z from '../../platform/zod.js';

export const mediaPath = z.object({ mediaId: z.string() });
