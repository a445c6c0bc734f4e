/**
 * A streaming reply's markdown in blocks: split at blank lines outside fenced code (``` or ~~~, a
 * fence closed by the same character at least as long), so each block renders on its own.
 */
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker) {
      if (!fence) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    }
    if (!fence && line.trim() === '' && current.length) {
      blocks.push(current.join('\n'));
      current = [];
    } else if (fence || line.trim() !== '') {
      current.push(line);
    }
  }
  if (current.length) blocks.push(current.join('\n'));
  return blocks;
}
