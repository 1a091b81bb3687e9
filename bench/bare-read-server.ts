// The baseline of `npm run bench:reads`: a bare Fastify server that answers GET /contacts/:id with one primary-key
// select on PostgreSQL (the same pool size as the API), no auth, no rate limit, no schema. Started by reads.ts.
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });
const ORG = process.env.BENCH_ORG_ID as string;

app.get('/contacts/:id', async (request, reply) => {
  const { id } = request.params as { id: string };
  const result = await pool.query('select * from contacts where org_id = $1 and id = $2', [
    (request.headers['x-org'] as string | undefined) ?? ORG,
    id,
  ]);
  if (result.rowCount === 0) return reply.code(404).send({ detail: 'not_found' });
  return result.rows[0];
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
process.once('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))));
