// A stand-in for the Lambda Node.js runtime's response streaming (`awslambda.streamifyResponse`,
// `awslambda.HttpResponseStream`), which serverless-offline does not provide. A handler's response stream is a
// LocalResponseStream: the prelude (status, headers, cookies) is sent with the first byte, and each write
// reaches the client at once; when the client goes away the stream is destroyed, as in Lambda.
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';

interface Prelude {
  statusCode?: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

export class LocalResponseStream extends Writable {
  #prelude: Prelude = {};
  #contentType = 'application/octet-stream';
  #headSent = false;

  constructor(private readonly res: ServerResponse) {
    super();
    // The destroy below emits 'error'; a handler between writes has no listener then, and an unheard 'error' is an
    // uncaught exception that took the whole local stack down when a browser left a live page. Handlers still see
    // the failure: their next write fails, and listeners of their own still hear it.
    this.on('error', () => undefined);
    res.once('close', () => {
      if (!res.writableFinished) this.destroy(new Error('client disconnected'));
    });
  }

  setPrelude(prelude: Prelude): void {
    this.#prelude = prelude;
  }

  setContentType(contentType: string): void {
    this.#contentType = contentType;
  }

  #sendHead(): void {
    if (this.#headSent) return;
    this.#headSent = true;
    const headers: Record<string, string | string[]> = { 'content-type': this.#contentType, ...this.#prelude.headers };
    if (this.#prelude.cookies?.length) headers['set-cookie'] = this.#prelude.cookies;
    this.res.writeHead(this.#prelude.statusCode ?? 200, headers);
    this.res.flushHeaders();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#sendHead();
    if (chunk.length === 0) return callback();
    this.res.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#sendHead();
    this.res.end(callback);
  }
}

type StreamHandler = (event: unknown, stream: Writable, context: unknown) => Promise<void> | void;

/**
 * Adds the streaming members to the `awslambda` global unless a real runtime provides them. The global itself
 * may already exist: @aws/lambda-invoke-store (used by the AWS SDK) creates it for its InvokeStore.
 */
export const installLambdaStreamingShim = (): void => {
  const holder = globalThis as unknown as { awslambda?: Record<string, unknown> };
  const awslambda = (holder.awslambda ??= {});
  awslambda['streamifyResponse'] ??= (handler: StreamHandler) => handler;
  awslambda['HttpResponseStream'] ??= class HttpResponseStream {
    static from(stream: Writable, prelude: Prelude): Writable {
      if (stream instanceof LocalResponseStream) stream.setPrelude(prelude);
      return stream;
    }
  };
};
