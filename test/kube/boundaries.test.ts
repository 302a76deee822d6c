/**
 * One module opens HTTP connections (src/kube/transport.ts): no other file under src/ imports
 * node's http or https as a module, and the agent none at all.
 */
import * as fs from 'fs';
import * as path from 'path';

const SRC = path.join(__dirname, '..', '..', 'src');
const files = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
const NODE_HTTP = /^import \* as https? from ['"](node:)?https?['"]|require\(['"](node:)?https?['"]\)/m;
const ANY_HTTP = /from ['"](node:)?https?['"]|require\(['"](node:)?https?['"]\)/;

describe('the one owner of HTTP connections', () => {
  it('is src/kube/transport.ts', () => {
    const owners = files(SRC).filter((f) => NODE_HTTP.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(SRC, f));
    expect(owners).toEqual([path.join('kube', 'transport.ts')]);
  });

  it('leaves src/agent without any import of http or https', () => {
    const agent = files(path.join(SRC, 'agent')).filter((f) => ANY_HTTP.test(fs.readFileSync(f, 'utf8')));
    expect(agent).toEqual([]);
  });
});
