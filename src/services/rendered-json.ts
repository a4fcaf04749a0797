/**
 * A response body that the store has already written as JSON, in the shape
 * of the route's response schema (see store/sqlite/documents.ts). Routes
 * send it as it is (src/http/rendered-json.ts) instead of serializing an
 * object.
 */
export class RenderedJson {
  constructor(readonly body: string | Buffer) {}
}
