// The bare baseline of the list rows: Fastify and node-postgres answering one fixed page of 50 contacts (the
// first page of the `recent` sort), with no auth, validation, filters, cursors or counts. What any HTTP list
// costs on this machine; the API's list is measured against it in the same run.
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';

const PAGE = `select id, first_name, last_name, email, phone, country, city, social_handle, inbox_handle,
    messaging_username, origin, sub_origin_id, messaging_status, funnel_stage_id, owner_id, last_contacted_at,
    created_at, updated_at
  from contacts where org_id = $1 and deleted_at is null order by updated_at desc, id desc limit 50`;

export interface BareServer {
  url: string;
  /** The same statement on the same pool, without HTTP. */
  query(): Promise<void>;
  close(): Promise<void>;
}

export async function startBareServer(databaseUrl: string, orgId: string): Promise<BareServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const app: FastifyInstance = Fastify({ logger: false });
  app.get('/page', async () => ({ items: (await pool.query(PAGE, [orgId])).rows, next_cursor: null }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `${url}/page`,
    query: async () => void (await pool.query(PAGE, [orgId])),
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}
