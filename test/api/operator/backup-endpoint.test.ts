// D147: the operator's GET /admin/v1/backup (what `crm backup` asks a running server for): the embedded
// database's gzipped tarball, or on PostgreSQL a clear 409 that points at pg_dump.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../../helpers/database.ts';
import { ADMIN_TOKEN, type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const backup = () =>
  h.app.inject({ method: 'GET', url: '/admin/v1/backup', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

describe('GET /admin/v1/backup', () => {
  it('needs the operator token', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/admin/v1/backup' })).statusCode).toBe(401);
  });

  it.runIf(testDatabaseKind() === 'pglite')('answers the embedded database as a gzipped tarball', async () => {
    const response = await backup();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/gzip');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="crm-backup-.*\.tar\.gz"$/);
    expect([...response.rawPayload.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  });

  it.runIf(testDatabaseKind() === 'postgres')('refuses on PostgreSQL with 409 backup_unavailable', async () => {
    const response = await backup();
    expect(response.statusCode).toBe(409);
    expect(response.json().detail).toMatchObject({ code: 'backup_unavailable' });
    expect(response.json().detail.message).toContain('pg_dump');
  });
});
