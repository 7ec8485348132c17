// A local OpenAI-compatible chat server for bench/answers.sh: one GGUF model on the CPU
// through node-llama-cpp (prebuilt llama.cpp from the npm registry), streaming
// /v1/chat/completions as OpenAI does. One request at a time, as a single-slot server is;
// a client that hangs up stops its generation. Each request's figures (time to the first
// token, tokens, tokens per second) go as one JSON line to --stats.
//
//   node bench/llm-server.mjs --model M.gguf --port 8931 --stats stats.jsonl [--threads 2]
import http from 'node:http';
import fs from 'node:fs';
import { getLlama, LlamaChatSession } from 'node-llama-cpp';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const modelPath = args.model;
const port = Number(args.port ?? 8931);
const threads = Number(args.threads ?? 2);
if (!modelPath) throw new Error('--model FILE.gguf is required');

const llama = await getLlama({ gpu: false, build: 'never' });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: Math.min(8192, model.trainContextSize), threads });

let queue = Promise.resolve();
const serial = (job) => (queue = queue.then(job, job));

function sse(res, obj) {
  res.write(`data: ${JSON.stringify(obj)}\n\n`);
}

async function complete(body, req, res) {
  const messages = body.messages ?? [];
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
  const user = messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n\n');
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const received = Date.now();
  await serial(async () => {
    if (abort.signal.aborted) return;
    const started = Date.now();
    const sequence = context.getSequence();
    const session = new LlamaChatSession({ contextSequence: sequence, systemPrompt: system });
    let first = null;
    let text = '';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    try {
      await session.prompt(user, {
        temperature: body.temperature ?? 0,
        maxTokens: body.max_tokens ?? 512,
        signal: abort.signal,
        stopOnAbortSignal: true,
        onTextChunk(chunk) {
          if (first === null) first = Date.now();
          text += chunk;
          sse(res, { choices: [{ index: 0, delta: { content: chunk } }] });
        },
      });
    } catch (e) {
      if (!abort.signal.aborted) console.error(`generation failed: ${e.message}`);
    } finally {
      const done = Date.now();
      const tokens = model.tokenize(text).length;
      const generating = (done - (first ?? done)) / 1000;
      if (args.stats) {
        fs.appendFileSync(
          args.stats,
          JSON.stringify({
            queued_s: (started - received) / 1000,
            first_token_s: first === null ? null : (first - started) / 1000,
            tokens,
            tokens_per_s: generating > 0 ? tokens / generating : null,
            aborted: abort.signal.aborted,
          }) + '\n',
        );
      }
      session.dispose();
      sequence.dispose();
      if (!abort.signal.aborted) {
        res.write('data: [DONE]\n\n');
        res.end();
      }
    }
  });
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ id: 'local', object: 'model' }] }));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    res.writeHead(404).end();
    return;
  }
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400).end();
      return;
    }
    complete(body, req, res).catch((e) => {
      console.error(e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
});
server.listen(port, '127.0.0.1', () => console.log(`llm server on http://127.0.0.1:${port}/v1 (${modelPath})`));
