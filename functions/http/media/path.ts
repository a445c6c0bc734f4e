/** The `{mediaId}` path parameter of the media and file routes. Any string; unknown ids are 404. */
import { z } from 'zod';

export const mediaPath = z.object({ mediaId: z.string() });
