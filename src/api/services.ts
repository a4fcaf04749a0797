import { documentService } from '../services/documents.js';
import { workspaceService } from '../services/workspace.js';
import type { ServiceDeps } from '../services/context.js';

export type Services = ReturnType<typeof makeServices>;

export function makeServices(deps: ServiceDeps) {
  return { documents: documentService(deps), workspace: workspaceService(deps) };
}
