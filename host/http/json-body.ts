/** Elements per slice of a long array: ~90 KB of JSON for 256 session summaries. */
const SLICE = 256;

/**
 * A JSON response body, as JSON.stringify writes it: one string, or, for an array longer than SLICE elements, its
 * bytes in slices. V8 builds a large JSON string as a rope, and flattening it, measuring it and encoding it whole
 * takes ~25 ms for the 3 MB listing of 10,000 sessions here (fresh pages for each 3 MB copy); slices of 256
 * elements, each serialised and encoded on its own, take ~12. The bytes are the same, except that an element's own
 * `toJSON` would see its index within its slice (response bodies are plain data).
 */
export function jsonBody(value: unknown): string | Buffer[] {
  if (!Array.isArray(value) || value.length <= SLICE) return JSON.stringify(value);
  const parts: Buffer[] = [];
  for (let i = 0; i < value.length; i += SLICE) {
    // `[a,b]`: the first slice keeps its `[`, the others' becomes `,`; the last keeps its `]`.
    const bytes = Buffer.from(JSON.stringify(value.slice(i, i + SLICE)));
    if (i > 0) bytes[0] = 0x2c;
    parts.push(i + SLICE >= value.length ? bytes : bytes.subarray(0, bytes.length - 1));
  }
  return parts;
}
