/**
 * A newer Folio has upgraded the database past what this one knows: its
 * schema, or the design of its search words. This Folio neither serves nor
 * migrates it, since what it wrote the newer one would read otherwise
 * (documents missing from searches, say); every instance on one database
 * runs one version (docs/operations.md).
 */
export class NewerSchema extends Error {
  constructor(what: string) {
    super(`${what}: a newer Folio has upgraded this database; run that version, or restore a backup made before the upgrade`);
    this.name = 'NewerSchema';
  }
}

/** Refuses a schema version above the last migration this Folio has (`known`). */
export function refuseNewerSchema(version: number, known: number): void {
  if (version > known) throw new NewerSchema(`the database's schema is version ${version}, and this Folio knows versions up to ${known}`);
}
