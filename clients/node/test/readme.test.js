'use strict';
// The example of README.md runs as written, and prints what its comments say.

const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFile } = require('node:child_process');

// inside the package, so that `import 'ndd-pg'` resolves to this package
const file = path.join(__dirname, `readme-example-${process.pid}.tmp.mjs`);

after(() => fs.rmSync(file, { force: true }));

test('the README example runs and prints what it says', async () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Example'));
  const code = /```js\n([\s\S]*?)```/.exec(section)[1];
  fs.writeFileSync(file, code);
  const stdout = await new Promise((resolve, reject) => {
    execFile(process.execPath, [file], { timeout: 30000 }, (err, out, errOut) => {
      if (err) reject(new Error(`${err.message}\n${errOut}`));
      else resolve(out);
    });
  });
  const lines = stdout.split('\n');
  assert.equal(lines[0], '128 word 2');
  assert.equal(lines[1], '0.7265625');
  assert.equal(lines[2], '97750113832d01db 8');
  assert.equal(lines[3], '0.7265625');
  // each commented answer in the code appears in the output (whitespace aside)
  const flat = stdout.replace(/\s+/g, ' ');
  const answers = [...code.matchAll(/^\/\/ (\[ \{.*\] ?)$/gm)].map((m) => m[1].trim());
  assert.equal(answers.length, 4);
  for (const a of answers) assert.ok(flat.includes(a), a);
  assert.ok(flat.includes("{ idA: '2', idB: '3', similarity: 0.6015625, distance: null }"));
});
