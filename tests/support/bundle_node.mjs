// Runs queries through the static bundle's reader in node (no browser): the parity harness of
// tests/test_expand_bundle.py. argv: reader module path, manifest URL, a JSON file of
// [{q, fuzzy, prefix, k}]. Prints one JSON line per query: {rows, scores, corrections, terms}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [reader, manifest, queries] = process.argv.slice(2);
globalThis.location = { href: manifest };
const { Bundle } = await import(pathToFileURL(reader).href);
const bundle = await Bundle.open(manifest);
const out = [];
for (const { q, fuzzy, prefix, k } of JSON.parse(readFileSync(queries, "utf8"))) {
  const hit = await bundle.scored(q, { fuzzy, prefix });
  const { ranked } = await bundle.rank(q, k, { fuzzy, prefix });
  out.push({
    rows: ranked.map((r) => r.row),
    scores: ranked.map((r) => r.score),
    corrections: hit.expansion.corrections,
    terms: hit.terms,
  });
}
process.stdout.write(JSON.stringify(out));
