// The private internals of libraries that src/ still relies on (issue 34 item 5), each pinned here
// so that an upgrade that moves one fails this test instead of breaking the product silently:
//
// - dbus-next's `MessageBus._connection.stream` (src/agent/systemd-dbus.ts `busStream`): the
//   socket whose end shows a bus that went away (dbus-next forwards its errors, not its end), and
//   whose cork/uncork batch the calls of one tick into one writev(2);
// - `require('cdk8s/node_modules/yaml')` (src/config/yaml-text.ts `yamlLib`): cdk8s's own copy of yaml,
//   so that synth loads one yaml, not two;
// - yaml's parser fed by hand (load.ts `parseYaml`): Lexer, Parser with its `stack` and `offset`
//   read between lexemes (the depth bound), Composer, LineCounter;
// - `Alias.toJSON` replaced on each alias node (load.ts `watchAliases`) to learn which alias
//   yaml's `maxAliasCount` refused.
//
// When one of these fails, change the use in src/ (or drop it) with the library, then this test.
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

describe('private library internals src/ relies on', () => {
  it("dbus-next: a MessageBus's _connection.stream is its socket, with cork/uncork, and it ends when the bus goes away", async () => {
    const dbus = require('dbus-next') as typeof import('dbus-next');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-dbus-internals-'));
    const sock = path.join(dir, 'bus');
    const accepted: net.Socket[] = [];
    const server = net.createServer((s) => accepted.push(s));
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    const connected = new Promise<void>((resolve) => server.once('connection', () => resolve()));
    const bus = dbus.sessionBus({ busAddress: `unix:path=${sock}` });
    bus.on('error', () => undefined); // the fake bus never answers the handshake; its end is what is watched
    try {
      await connected;
      const stream = (bus as unknown as { _connection?: { stream?: net.Socket } })._connection?.stream;
      expect(stream).toBeInstanceOf(net.Socket);
      expect(typeof stream!.cork).toBe('function');
      expect(typeof stream!.uncork).toBe('function');
      const ended = new Promise<void>((resolve) => stream!.once('end', () => resolve()));
      accepted[0].end(); // the bus goes away
      await ended;
    } finally {
      bus.disconnect();
      for (const s of accepted) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("cdk8s's own yaml is where src/config/yaml-text.ts requires it: a yaml 2, the same major as ours", () => {
    const own = require('cdk8s/node_modules/yaml/package.json') as { version: string };
    const ours = require('yaml/package.json') as { version: string };
    expect(own.version.split('.')[0]).toBe('2');
    expect(own.version.split('.')[0]).toBe(ours.version.split('.')[0]);
    const Y = require('cdk8s/node_modules/yaml') as typeof import('yaml');
    for (const k of ['Lexer', 'Parser', 'Composer', 'LineCounter', 'visit', 'isAlias'] as const) expect([k, typeof Y[k]]).toEqual([k, 'function']);
  });

  it("yaml's Parser, fed lexeme by lexeme, shows its depth in stack and its place in offset; the Composer takes its tokens", () => {
    const Y = require('cdk8s/node_modules/yaml') as typeof import('yaml');
    const text = 'a:\n  b:\n    c:\n      d: 1\n';
    const lines = new Y.LineCounter();
    lines.addNewLine(0);
    const parser = new Y.Parser(lines.addNewLine);
    const tokens: import('yaml').CST.Token[] = [];
    let deepest = 0;
    let lastOffset = -1;
    let offsetGrows = true;
    for (const lexeme of new Y.Lexer().lex(text)) {
      for (const token of parser.next(lexeme)) tokens.push(token);
      deepest = Math.max(deepest, parser.stack.length);
      offsetGrows &&= parser.offset >= lastOffset;
      lastOffset = parser.offset;
    }
    for (const token of parser.end()) tokens.push(token);
    // the document and the scalar being read besides the four maps (load.ts counts `stack.length - 2`)
    expect(deepest).toBe(6);
    expect(offsetGrows).toBe(true);
    expect(lastOffset).toBe(text.length);
    expect(lines.linePos(text.indexOf('d'))).toEqual({ line: 4, col: 7 });
    const docs = [...new Y.Composer({ uniqueKeys: true }).compose(tokens, true, text.length)];
    expect(docs.map((d) => d.toJS())).toEqual([{ a: { b: { c: { d: 1 } } } }]);
  });

  it("yaml resolves an alias through the node's own toJSON, so a replaced one sees the alias that maxAliasCount refuses", () => {
    const Y = require('cdk8s/node_modules/yaml') as typeof import('yaml');
    const doc = Y.parseDocument('a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n');
    const refused: string[] = [];
    Y.visit(doc, {
      Alias(_key, node) {
        const resolve = node.toJSON.bind(node);
        node.toJSON = (...args: Parameters<typeof resolve>) => {
          try {
            return resolve(...args);
          } catch (e) {
            refused.push(node.source);
            throw e;
          }
        };
      },
    });
    expect(() => doc.toJS({ maxAliasCount: 5 })).toThrow(/Excessive alias count/);
    expect(refused[0]).toBe('b');
  });
});
