// scidx static search reader: keyword (BM25) search over a bundle written by
// `toolup-rag export-web`, with the results of Index.search(..., mode="keyword"): the same
// tokenizer (scidx-tok-2, ported word for word from src/scidx/tokenize.py), the same float32
// impacts summed in the same order, the same order (score descending, chunk row ascending).
// Optional vector leg for semantic bundles: query vectors from an OpenAI-compatible
// /v1/embeddings endpoint; vector and hybrid modes rank as the index does, evidence rule
// included (index/search.py). ES module, no dependencies.

const FORMAT_MAJOR = "scidx-web/2";
export const TOKENIZER_VERSION = "scidx-tok-2";

// ---- tokenizer (src/scidx/tokenize.py) ------------------------------------------------------

const STOP = new Set(("a about above after again against am an and any are as at be because been " +
  "before being below between both but by can could did do does doing during each few for from " +
  "further had has have having he her here hers herself him himself his how i if in into is it " +
  "its itself just me more most my myself nor of on once or other our ours ourselves over own " +
  "same she should so some such than that the their theirs them themselves then there these " +
  "they this those through to too under until very was we were what when where which while who " +
  "whom why will with would you your yours yourself yourselves").split(" "));

// Python's str.casefold where it differs from String.prototype.toLowerCase (key char, then
// its folding; generated from CPython's Unicode tables, checked by tests/test_web_bundle_browser.py).
const FOLD = new Map("µμ|ßss|ŉʼn|ſs|ǰǰ|ͅι|ΐΐ|ΰΰ|ςσ|ϐβ|ϑθ|ϕφ|ϖπ|ϰκ|ϱρ|ϵε|ևեւ|ᎠᎠ|ᎡᎡ|ᎢᎢ|ᎣᎣ|ᎤᎤ|ᎥᎥ|ᎦᎦ|ᎧᎧ|ᎨᎨ|ᎩᎩ|ᎪᎪ|ᎫᎫ|ᎬᎬ|ᎭᎭ|ᎮᎮ|ᎯᎯ|ᎰᎰ|ᎱᎱ|ᎲᎲ|ᎳᎳ|ᎴᎴ|ᎵᎵ|ᎶᎶ|ᎷᎷ|ᎸᎸ|ᎹᎹ|ᎺᎺ|ᎻᎻ|ᎼᎼ|ᎽᎽ|ᎾᎾ|ᎿᎿ|ᏀᏀ|ᏁᏁ|ᏂᏂ|ᏃᏃ|ᏄᏄ|ᏅᏅ|ᏆᏆ|ᏇᏇ|ᏈᏈ|ᏉᏉ|ᏊᏊ|ᏋᏋ|ᏌᏌ|ᏍᏍ|ᏎᏎ|ᏏᏏ|ᏐᏐ|ᏑᏑ|ᏒᏒ|ᏓᏓ|ᏔᏔ|ᏕᏕ|ᏖᏖ|ᏗᏗ|ᏘᏘ|ᏙᏙ|ᏚᏚ|ᏛᏛ|ᏜᏜ|ᏝᏝ|ᏞᏞ|ᏟᏟ|ᏠᏠ|ᏡᏡ|ᏢᏢ|ᏣᏣ|ᏤᏤ|ᏥᏥ|ᏦᏦ|ᏧᏧ|ᏨᏨ|ᏩᏩ|ᏪᏪ|ᏫᏫ|ᏬᏬ|ᏭᏭ|ᏮᏮ|ᏯᏯ|ᏰᏰ|ᏱᏱ|ᏲᏲ|ᏳᏳ|ᏴᏴ|ᏵᏵ|ᏸᏰ|ᏹᏱ|ᏺᏲ|ᏻᏳ|ᏼᏴ|ᏽᏵ|ᲀв|ᲁд|ᲂо|ᲃс|ᲄт|ᲅт|ᲆъ|ᲇѣ|ᲈꙋ|ẖẖ|ẗẗ|ẘẘ|ẙẙ|ẚaʾ|ẛṡ|ẞss|ὐὐ|ὒὒ|ὔὔ|ὖὖ|ᾀἀι|ᾁἁι|ᾂἂι|ᾃἃι|ᾄἄι|ᾅἅι|ᾆἆι|ᾇἇι|ᾈἀι|ᾉἁι|ᾊἂι|ᾋἃι|ᾌἄι|ᾍἅι|ᾎἆι|ᾏἇι|ᾐἠι|ᾑἡι|ᾒἢι|ᾓἣι|ᾔἤι|ᾕἥι|ᾖἦι|ᾗἧι|ᾘἠι|ᾙἡι|ᾚἢι|ᾛἣι|ᾜἤι|ᾝἥι|ᾞἦι|ᾟἧι|ᾠὠι|ᾡὡι|ᾢὢι|ᾣὣι|ᾤὤι|ᾥὥι|ᾦὦι|ᾧὧι|ᾨὠι|ᾩὡι|ᾪὢι|ᾫὣι|ᾬὤι|ᾭὥι|ᾮὦι|ᾯὧι|ᾲὰι|ᾳαι|ᾴάι|ᾶᾶ|ᾷᾶι|ᾼαι|ιι|ῂὴι|ῃηι|ῄήι|ῆῆ|ῇῆι|ῌηι|ῒῒ|ΐΐ|ῖῖ|ῗῗ|ῢῢ|ΰΰ|ῤῤ|ῦῦ|ῧῧ|ῲὼι|ῳωι|ῴώι|ῶῶ|ῷῶι|ῼωι|ꭰᎠ|ꭱᎡ|ꭲᎢ|ꭳᎣ|ꭴᎤ|ꭵᎥ|ꭶᎦ|ꭷᎧ|ꭸᎨ|ꭹᎩ|ꭺᎪ|ꭻᎫ|ꭼᎬ|ꭽᎭ|ꭾᎮ|ꭿᎯ|ꮀᎰ|ꮁᎱ|ꮂᎲ|ꮃᎳ|ꮄᎴ|ꮅᎵ|ꮆᎶ|ꮇᎷ|ꮈᎸ|ꮉᎹ|ꮊᎺ|ꮋᎻ|ꮌᎼ|ꮍᎽ|ꮎᎾ|ꮏᎿ|ꮐᏀ|ꮑᏁ|ꮒᏂ|ꮓᏃ|ꮔᏄ|ꮕᏅ|ꮖᏆ|ꮗᏇ|ꮘᏈ|ꮙᏉ|ꮚᏊ|ꮛᏋ|ꮜᏌ|ꮝᏍ|ꮞᏎ|ꮟᏏ|ꮠᏐ|ꮡᏑ|ꮢᏒ|ꮣᏓ|ꮤᏔ|ꮥᏕ|ꮦᏖ|ꮧᏗ|ꮨᏘ|ꮩᏙ|ꮪᏚ|ꮫᏛ|ꮬᏜ|ꮭᏝ|ꮮᏞ|ꮯᏟ|ꮰᏠ|ꮱᏡ|ꮲᏢ|ꮳᏣ|ꮴᏤ|ꮵᏥ|ꮶᏦ|ꮷᏧ|ꮸᏨ|ꮹᏩ|ꮺᏪ|ꮻᏫ|ꮼᏬ|ꮽᏭ|ꮾᏮ|ꮿᏯ|ﬀff|ﬁfi|ﬂfl|ﬃffi|ﬄffl|ﬅst|ﬆst|ﬓմն|ﬔմե|ﬕմի|ﬖվն|ﬗմխ".split("|").map((e) => { const k = String.fromCodePoint(e.codePointAt(0)); return [k, e.slice(k.length)]; }));
const WORD = /[\p{L}\p{N}_]+/gu; // Python's \w for str: letters, numbers, underscore
const ONE_DIGIT = /^[\p{Nd}\u{1369}-\u{1371}\u{19da}\u{24f5}-\u{24fd}\u{24ff}\u{2776}-\u{277e}\u{2780}-\u{2788}\u{278a}-\u{2792}\u{10a40}-\u{10a43}\u{10e60}-\u{10e68}\u{11052}-\u{1105a}]$/u;
const ASCII = /^[\x00-\x7f]*$/;
const LOWER_ALPHA = /^[a-z]+$/;

/** NFKC, then case folding (Python's normalize). */
export function normalize(text) {
  const s = text.normalize("NFKC");
  if (ASCII.test(s)) return s.toLowerCase();
  let out = "";
  for (const ch of s) {
    const f = FOLD.get(ch);
    out += f !== undefined ? f : ch.toLowerCase();
  }
  return out;
}

const EX1 = new Map(Object.entries({ skis: "ski", skies: "sky", dying: "die", lying: "lie",
  tying: "tie", idly: "idl", gently: "gentl", ugly: "ugli", early: "earli", only: "onli",
  singly: "singl", sky: "sky", news: "news", howe: "howe", atlas: "atlas", cosmos: "cosmos",
  bias: "bias", andes: "andes" }));
const EX2 = new Set(["canning", "earring", "evening", "exceed", "herring", "inning", "outing",
  "proceed", "succeed"]);
const R1_PREFIXES = ["gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ", "inter"];
const STEP1B = ["eedly", "ingly", "edly", "eed", "ing", "ed"];
const STEP2 = [["ization", "ize"], ["ational", "ate"], ["fulness", "ful"], ["ousness", "ous"],
  ["iveness", "ive"], ["tional", "tion"], ["biliti", "ble"], ["lessli", "less"], ["entli", "ent"],
  ["ogist", "og"], ["ation", "ate"], ["alism", "al"], ["aliti", "al"], ["ousli", "ous"],
  ["iviti", "ive"], ["fulli", "ful"], ["enci", "ence"], ["anci", "ance"], ["abli", "able"],
  ["izer", "ize"], ["ator", "ate"], ["alli", "al"], ["bli", "ble"], ["ogi", "og"], ["li", ""]];
const STEP3 = [["ational", "ate"], ["tional", "tion"], ["alize", "al"], ["icate", "ic"],
  ["iciti", "ic"], ["ative", ""], ["ical", "ic"], ["ness", ""], ["ful", ""]];
const STEP4 = ["ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti",
  "ous", "ive", "ize", "ion", "al", "er", "ic"];
const DOUBLES = ["bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"];
const LI_ENDING = "cdeghkmnrt";

const isV = (c) => c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || c === "y";
const hasVowel = (s) => /[aeiouy]/.test(s);

function regionAfter(w, start) {
  for (let i = start + 1; i < w.length; i++) if (!isV(w[i]) && isV(w[i - 1])) return i + 1;
  return w.length;
}

function shortSyllable(w) {
  if (w.endsWith("past")) return true;
  const n = w.length;
  if (n >= 3) {
    const c = w[n - 1];
    return !isV(w[n - 3]) && isV(w[n - 2]) && !isV(c) && c !== "w" && c !== "x" && c !== "Y";
  }
  if (n === 2) return isV(w[0]) && !isV(w[1]);
  return false;
}

function step1b(w, r1) {
  for (const suffix of STEP1B) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (suffix === "eed" || suffix === "eedly") {
      if (w.length - suffix.length >= r1) w = stem + "ee";
    } else if (hasVowel(stem)) {
      w = stem;
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (DOUBLES.some((d) => w.endsWith(d)) && !(w.length === 3 && "aeo".includes(w[0]))) w = w.slice(0, -1);
      else if (w.length === r1 && shortSyllable(w)) w += "e";
    }
    break;
  }
  return w;
}

function step2(w, r1) {
  for (const [suffix, repl] of STEP2) {
    if (!w.endsWith(suffix)) continue;
    if (w.length - suffix.length >= r1) {
      if (suffix === "ogi") {
        if (w[w.length - 4] === "l") w = w.slice(0, -3) + repl;
      } else if (suffix === "li") {
        const c = w[w.length - 3];
        if (c !== undefined && LI_ENDING.includes(c)) w = w.slice(0, -2);
      } else w = w.slice(0, w.length - suffix.length) + repl;
    }
    break;
  }
  return w;
}

function step3(w, r1, r2) {
  for (const [suffix, repl] of STEP3) {
    if (!w.endsWith(suffix)) continue;
    if (w.length - suffix.length >= r1) {
      if (suffix === "ative") {
        if (w.length - 5 >= r2) w = w.slice(0, -5);
      } else w = w.slice(0, w.length - suffix.length) + repl;
    }
    break;
  }
  return w;
}

function step4(w, r2) {
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    if (w.length - suffix.length >= r2) {
      if (suffix === "ion") {
        const c = w[w.length - 4];
        if ((c === "s" || c === "t") && w.length >= 4) w = w.slice(0, -3);
      } else w = w.slice(0, w.length - suffix.length);
    }
    break;
  }
  return w;
}

function porter2(word) {
  if (word.length <= 2) return word;
  const ex = EX1.get(word);
  if (ex !== undefined) return ex;
  let w = word;
  if (w.includes("y")) {
    const ch = w.split("");
    if (ch[0] === "y") ch[0] = "Y";
    for (let i = 1; i < ch.length; i++) if (ch[i] === "y" && isV(ch[i - 1])) ch[i] = "Y";
    w = ch.join("");
  }
  let r1 = -1;
  for (const p of R1_PREFIXES) if (w.startsWith(p)) { r1 = p.length; break; }
  if (r1 < 0) r1 = regionAfter(w, 0);
  const r2 = r1 < w.length ? regionAfter(w, r1) : w.length;
  // Step 1a (Step 0's apostrophes cannot occur: only [a-z]+ words are stemmed).
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ied") || w.endsWith("ies")) w = w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  else if (w.endsWith("us") || w.endsWith("ss")) { /* kept */ }
  else if (w.endsWith("s") && hasVowel(w.slice(0, -2))) w = w.slice(0, -1);
  if (EX2.has(w)) return w;
  w = step1b(w, r1);
  if (w.length > 2 && (w.endsWith("y") || w.endsWith("Y")) && !isV(w[w.length - 2])) w = w.slice(0, -1) + "i";
  w = step4(step3(step2(w, r1), r1, r2), r2);
  if (w.endsWith("e")) {
    const pos = w.length - 1;
    if (pos >= r2 || (pos >= r1 && !shortSyllable(w.slice(0, -1)))) w = w.slice(0, -1);
  } else if (w.endsWith("l") && w.length - 1 >= r2 && w[w.length - 2] === "l") w = w.slice(0, -1);
  return w.replace(/Y/g, "y");
}

const STEMS = new Map();
/** The Snowball English stem of a lower-case ASCII word (memoised). */
export function stem(word) {
  let s = STEMS.get(word);
  if (s === undefined) {
    if (STEMS.size > 100000) STEMS.clear();
    s = porter2(word);
    STEMS.set(word, s);
  }
  return s;
}

function term(word) {
  if (STOP.has(word)) return null;
  if (word.length <= 2 && [...word].length === 1 && !ONE_DIGIT.test(word)) return null;
  if (LOWER_ALPHA.test(word)) return stem(word);
  return word; // digits or non-ASCII: kept verbatim
}

function runTerms(run, out) {
  if (run.includes("_")) {
    const parts = run.split("_").filter((p) => p);
    for (const p of parts) { const t = term(p); if (t !== null) out.push(t); }
    if (parts.length > 1) out.push(parts.join("_"));
  } else {
    const t = term(run);
    if (t !== null) out.push(t);
  }
}

/** BM25 terms of text, in text order (tokenize.tokenize). */
export function tokenize(text) {
  const out = [];
  for (const m of normalize(text).matchAll(WORD)) runTerms(m[0], out);
  return out;
}

/** The distinct terms of a query, first occurrence first (bm25.query_terms). */
export function queryTerms(query) {
  return [...new Set(tokenize(query))];
}

const WORD_TERMS = new Map();
/** The terms one \w+ run as written makes (tokenize.run_terms), memoised. */
export function wordTerms(word) {
  let t = WORD_TERMS.get(word);
  if (t === undefined) {
    t = tokenize(word);
    if (word.length <= 64) {
      if (WORD_TERMS.size > 100000) WORD_TERMS.clear();
      WORD_TERMS.set(word, t);
    }
  }
  return t;
}

// ---- snippets (src/scidx/index/highlight.py) -------------------------------------------------

function matches(flat, wanted) {
  const out = [];
  if (!wanted.size || !flat) return out;
  for (const m of flat.matchAll(WORD)) {
    const key = wordTerms(m[0]).find((t) => wanted.has(t));
    if (key !== undefined) out.push([m.index, m.index + m[0].length, key]);
  }
  return out;
}

function bestWindow(ms, budget) {
  const n = ms.length;
  if (ms[n - 1][1] - ms[0][0] <= budget) return [0, n - 1];
  let bestTerms = -1, bestCount = -1, best = [0, 0], j = -1;
  for (let i = 0; i < n; i++) {
    const limit = ms[i][0] + budget;
    if (j < i) j = i;
    else if (ms[j + 1][1] > limit) continue;
    while (j < n - 1 && ms[j + 1][1] <= limit) j++;
    const count = j - i + 1;
    if (count > bestCount || count > bestTerms) {
      const distinct = new Set(ms.slice(i, j + 1).map((m) => m[2])).size;
      if (distinct > bestTerms || (distinct === bestTerms && count > bestCount)) {
        bestTerms = distinct; bestCount = count; best = [i, j];
      }
    }
    if (j === n - 1) break;
  }
  return best;
}

function wordCut(flat, start, end) {
  if (start > 0 && flat[start - 1] !== " " && flat[start] !== " ") {
    const next = flat.indexOf(" ", start);
    if (next !== -1 && next < end) start = next + 1;
  }
  if (end < flat.length && flat[end] !== " " && flat[end - 1] !== " ") {
    const prev = flat.lastIndexOf(" ", end - 1);
    if (prev > start) end = prev;
  }
  while (start < end && flat[start] === " ") start++;
  while (end > start && flat[end - 1] === " ") end--;
  return [start, end];
}

function frame(flat, ms, limit) {
  if (flat.length <= limit) return [0, flat.length, false];
  if (limit < 8) return [0, limit, false];
  const budget = limit - 2;
  let start = 0;
  if (ms.length) {
    const [i, j] = bestWindow(ms, budget);
    const lo = ms[i][0], hi = ms[j][1];
    const slack = Math.max(budget - (hi - lo), 0);
    start = Math.max(0, lo - Math.min(Math.floor(slack / 3), 60));
  }
  const end = Math.min(flat.length, start + budget);
  start = Math.max(0, end - budget);
  const [a, b] = wordCut(flat, start, end);
  return [a, b, true];
}

/** The best passage of a chunk's flat text for the query terms, with highlight ranges. */
export function snippet(flat, code, terms, limit = 240) {
  const ms = matches(flat, new Set(terms));
  const [start, end, cut] = frame(flat, ms, limit);
  const lead = cut && start > 0 ? "…" : "";
  const tail = cut && end < flat.length ? "…" : "";
  const move = lead.length - start;
  const clip = (ranges) => ranges.filter(([a, b]) => a < b && a < end && b > start)
    .map(([a, b]) => [Math.max(a, start) + move, Math.min(b, end) + move]);
  return { text: lead + flat.slice(start, end) + tail, highlights: clip(ms), code: clip(code || []) };
}

// ---- the bundle ------------------------------------------------------------------------------

async function inflate(response) {
  if (!response.ok) throw new Error("scidx bundle: " + response.url + " answered " + response.status);
  const body = response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(body).arrayBuffer());
}

function varints(bytes, at, count, out) {
  for (let i = 0; i < count; i++) {
    let v = 0, shift = 0, b;
    do {
      if (at >= bytes.length) throw new Error("scidx bundle: a shard is truncated");
      b = bytes[at++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    out[i] = v;
  }
  return at;
}

// A shard's terms are read at once, each term's postings only when a query asks for it: a
// shard holds a few thousand terms and a query needs one or two of them (decoding them all
// was most of a warm query's time).
function decodeShard(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4) throw new Error("scidx bundle: a shard is truncated");
  const textLen = view.getUint32(0, true);
  if (4 + textLen > bytes.length) throw new Error("scidx bundle: a shard is truncated");
  const terms = new TextDecoder().decode(bytes.subarray(4, 4 + textLen)).split("\n");
  const dfs = new Float64Array(terms.length);
  const deltasAt = varints(bytes, 4 + textLen, terms.length, dfs);
  const first = new Float64Array(terms.length); // each term's first posting
  let total = 0;
  dfs.forEach((df, i) => { first[i] = total; total += df; });
  let at = deltasAt;
  for (let seen = 0; seen < total; at++) {
    if (at >= bytes.length) throw new Error("scidx bundle: a shard is truncated");
    if (!(bytes[at] & 0x80)) seen++;
  }
  const planes = at;
  if (planes + 4 * total > bytes.length) throw new Error("scidx bundle: a shard is truncated");
  const rows = new Map(terms.map((t, i) => [t, i]));
  const done = new Map();
  return {
    get(term) {
      const i = rows.get(term);
      if (i === undefined) return undefined;
      let found = done.get(i);
      if (found) return found;
      const df = dfs[i], start = first[i];
      let p = deltasAt; // skip the earlier terms' deltas: one byte test each
      for (let seen = 0; seen < start; p++) if (!(bytes[p] & 0x80)) seen++;
      const deltas = new Float64Array(df);
      varints(bytes, p, df, deltas);
      const docs = new Int32Array(df);
      let row = 0;
      for (let j = 0; j < df; j++) { row += deltas[j]; docs[j] = row; }
      const raw = new Uint8Array(4 * df);
      for (let b = 0; b < 4; b++) {
        const from = planes + b * total + start;
        for (let j = 0; j < df; j++) raw[4 * j + b] = bytes[from + j];
      }
      found = { docs, weights: new Float32Array(raw.buffer) }; // little-endian on every browser
      done.set(i, found);
      return found;
    },
  };
}

// User Timing marks, for the browser's performance timeline (benchmarks/bench_web_bundle.py).
function mark(name) {
  if (typeof performance !== "undefined" && performance.mark) performance.mark(name);
}

// The index of the last of the ascending starts that is <= row.
function last(starts, row) {
  let lo = 0, hi = starts.length - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= row) lo = mid; else hi = mid - 1; }
  return lo;
}

/** A bundle opened from its manifest URL; fetched files are kept for the session. */
export class Bundle {
  constructor(url, manifest) {
    this.url = url;
    this.manifest = manifest;
    this.n = manifest.chunks;
    this.files = new Map();
    this.embed = null; // { url, model, headers } for the vector leg
  }

  /** Fetch and check the manifest. */
  static async open(url, options = {}) {
    const response = await fetch(url, { cache: "no-cache" });
    if (!response.ok) throw new Error("scidx bundle: " + url + " answered " + response.status);
    const manifest = await response.json();
    if (manifest.format !== FORMAT_MAJOR) {
      throw new Error("scidx bundle: format " + manifest.format + " is not " + FORMAT_MAJOR +
        "; export the bundle again with this scidx");
    }
    const bundle = new Bundle(new URL(url, location.href).href, manifest);
    bundle.embed = options.embeddings || manifest.embeddings || null;
    return bundle;
  }

  file(name, decode, priority = "auto") {
    let found = this.files.get(name);
    if (!found) {
      found = fetch(new URL(name, this.url), { priority }).then(inflate).then(decode);
      found.catch(() => this.files.delete(name));
      this.files.set(name, found);
    }
    return found;
  }

  async postings(term) {
    const shards = this.manifest.shards;
    let lo = 0, hi = shards.length - 1;
    if (hi < 0 || term < shards[0][0]) return null;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (shards[mid][0] <= term) lo = mid; else hi = mid - 1; }
    const map = await this.file(shards[lo][1], decodeShard);
    return map.get(term) || null;
  }

  /** Keyword ranking: [{row, score}] as bm25.keyword_top_k ranks them, and the query terms. */
  async rank(query, k = 10) {
    const terms = queryTerms(String(query || "").trim());
    const lists = (await Promise.all(terms.map((t) => this.postings(t)))).filter((p) => p);
    if (!lists.length) return { terms, ranked: [] };
    let rows, scores;
    if (lists.length === 1) {
      rows = lists[0].docs;
      scores = lists[0].weights;
    } else {
      // Summed in float64 in query-term order, then rounded to float32 (as np.bincount does).
      const sums = new Float64Array(this.n);
      const seen = [];
      for (const { docs, weights } of lists) {
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i];
          if (sums[d] === 0) seen.push(d);
          sums[d] += weights[i];
        }
      }
      rows = Int32Array.from(seen);
      scores = new Float32Array(seen.length);
      for (let i = 0; i < seen.length; i++) scores[i] = sums[seen[i]];
    }
    const order = [];
    for (let i = 0; i < rows.length; i++) if (scores[i] > 0) order.push(i);
    order.sort((a, b) => scores[b] - scores[a] || rows[a] - rows[b]);
    return { terms, ranked: order.slice(0, k).map((i) => ({ row: rows[i], score: scores[i] })) };
  }

  table() {
    return this.file(this.manifest.pages, (b) => {
      const t = JSON.parse(new TextDecoder().decode(b));
      const sums = (deltas) => { let at = 0; return deltas.map((d) => (at += d)); };
      t.pageStarts = sums(t.pageRows);
      t.sectionStarts = sums(t.sectionRows);
      return t;
    });
  }

  async page(row, priority = "auto") {
    const table = await this.table();
    const lo = last(table.pageStarts, row);
    const at = row - table.pageStarts[lo], per = table.pageChunks;
    const piece = Math.floor(at / per);
    const frag = await this.file("pages/" + table.files[lo] + "-" + piece + ".bin", (b) => JSON.parse(new TextDecoder().decode(b)), priority);
    const chunk = frag.chunks[at - piece * per];
    if (!chunk) throw new Error("scidx bundle: a page fragment lacks row " + row);
    return { frag, chunk };
  }

  /** The first k results of distinct sections (grouping.group_rows, group="section"). */
  async sections(ranked, k) {
    const table = await this.table();
    const seen = new Set();
    const out = [];
    for (const hit of ranked) {
      const run = last(table.sectionStarts, hit.row);
      const key = table.sectionIds ? table.sectionIds[run] : run;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(hit);
      if (out.length === k) break;
    }
    return out;
  }

  /**
   * Hits with the fields of scidx's Hit.to_dict (no full text), best first: the results of
   * Index.search(query, k, mode, group) for group "section" (the default) or null.
   * options.signal (an AbortSignal): a query made stale by a newer one stops at its next step
   * (before its page fragments are fetched) with an AbortError; files already on their way
   * still arrive and are kept. options.onFirst(hits): called once with the best hits as soon
   * as the first one's page fragment is in (the others may still be on their way), so a page
   * can show them before every fragment has arrived; not called when all came at once.
   */
  async search(query, options = {}) {
    const k = options.k || 10;
    const group = options.group === undefined ? "section" : options.group;
    const mode = options.mode || "hybrid";
    const signal = options.signal || null;
    const semantic = mode !== "keyword" && this.embed && this.manifest.vectors;
    const wide = group || semantic ? Infinity : k;
    const { terms, ranked } = await this.rank(query, wide);
    signal?.throwIfAborted();
    let results = semantic ? await this.fuse(String(query || "").trim(), ranked, mode === "vector") : ranked;
    results = group === "section" ? await this.sections(results, k) : results.slice(0, k);
    signal?.throwIfAborted();
    mark("scidx:ranked");
    const hits = new Array(results.length);
    let ready = 0; // hits[0..ready) are complete
    const onFirst = options.onFirst || null;
    // The best hit's fragment first: it is what onFirst shows while the others arrive.
    await Promise.all(results.map(({ row, score }, i) => this.page(row, i ? "low" : "high").then(({ frag, chunk }) => {
      const [id, anchor, headingPath, url, flat, code] = chunk;
      const s = snippet(flat, code, terms, options.snippetChars || 240);
      hits[i] = { id, row, score, source: frag.source, title: frag.title, anchor, headingPath, url: this.link(url),
        snippet: s.text, highlights: s.highlights, snippetCode: s.code };
      if (ready > 0 || i !== 0) return;
      while (ready < hits.length && hits[ready]) ready++;
      if (onFirst && ready < hits.length && !signal?.aborted) onFirst(hits.slice(0, ready));
    })));
    signal?.throwIfAborted();
    mark("scidx:fetched");
    return hits;
  }

  // A relative URL (an index packed without a site URL) is relative to the manifest's linkBase.
  link(url) {
    const base = this.manifest.linkBase;
    if (!url || base == null || /^([a-z][a-z0-9+.-]*:|\/|#)/i.test(url)) return url;
    return new URL(url, new URL(base, this.url)).href;
  }

  // ---- vector leg ----------------------------------------------------------------------------

  async queryVector(text) {
    const e = this.embed;
    const response = await fetch(new URL("embeddings", e.url.replace(/\/?$/, "/")), {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json" }, e.headers || {}),
      body: JSON.stringify({ model: e.model || this.manifest.provider.model, input: [text] }),
    });
    if (!response.ok) throw new Error("scidx bundle: the embeddings endpoint answered " + response.status);
    const body = await response.json();
    const v = Float64Array.from(body.data[0].embedding);
    const norm = Math.hypot(...v);
    return norm > 0 ? v.map((x) => x / norm) : null;
  }

  async cosines(q) {
    const info = this.manifest.vectors;
    const dim = info.dimensions;
    const out = new Float64Array(this.n);
    const parts = await Promise.all(info.shards.map((name) => this.file(name, (b) => b)));
    let row = 0;
    for (const bytes of parts) {
      const rows = Math.floor(bytes.length / (4 + dim));
      const scales = new Float32Array(bytes.slice(0, 4 * rows).buffer);
      const vec = new Int8Array(bytes.buffer, bytes.byteOffset + 4 * rows, rows * dim);
      for (let r = 0; r < rows; r++, row++) {
        let dot = 0;
        for (let d = 0, o = r * dim; d < dim; d++) dot += vec[o + d] * q[d];
        out[row] = dot * scales[r];
      }
    }
    return out;
  }

  /**
   * The index's vector and hybrid modes (index/search.py): cosines, or the max-normalised
   * weighted sum with Rocchio feedback; only chunks with evidence (a query term, or a cosine at
   * least the manifest's fusion.vectorFloor; no floor: none) are hits.
   */
  async fuse(text, ranked, vectorOnly) {
    if (!text) return [];
    const f = this.manifest.fusion || {};
    const alpha = f.alpha ?? 0.3, docs = f.prfDocs ?? 3, beta = f.prfBeta ?? 2, floor = f.vectorFloor ?? null;
    let q = await this.queryVector(text);
    if (!q && vectorOnly) return [];
    const kwMax = ranked.length ? ranked[0].score : 0;
    const fused = new Float64Array(this.n), keep = new Uint8Array(this.n);
    for (const h of ranked) keep[h.row] = 1;
    if (q) {
      if (!vectorOnly && docs > 0 && beta > 0 && kwMax > 0) {
        const top = ranked.slice(0, docs);
        const total = top.reduce((s, h) => s + h.score, 0);
        const rows = await this.rowVectors(top.map((h) => h.row));
        const e = q.map((x, d) => x + beta * top.reduce((s, h, i) => s + h.score * rows[i][d], 0) / total);
        const norm = Math.hypot(...e);
        if (norm > 0) q = e.map((x) => x / norm);
      }
      const cos = await this.cosines(q);
      let vmax = 0;
      for (const c of cos) if (c > vmax) vmax = c;
      for (let i = 0; i < this.n; i++) {
        if (vectorOnly) fused[i] = cos[i];
        else if (vmax > 0) fused[i] = Math.max(cos[i], 0) * (alpha / vmax);
        // float32 against float32, as numpy compares the file's cosines with the floor
        if (floor !== null && Math.fround(cos[i]) >= Math.fround(floor)) keep[i] = 1;
      }
    }
    if (!vectorOnly && kwMax > 0) for (const h of ranked) fused[h.row] += (1 - alpha) * h.score / kwMax;
    const order = [];
    for (let i = 0; i < this.n; i++) if (keep[i] && (vectorOnly || Math.fround(fused[i]) > 0)) order.push(i);
    order.sort((a, b) => Math.fround(fused[b]) - Math.fround(fused[a]) || a - b);
    return order.map((row) => ({ row, score: Math.fround(fused[row]) }));
  }

  async rowVectors(rowsWanted) {
    const info = this.manifest.vectors;
    const dim = info.dimensions;
    return Promise.all(rowsWanted.map(async (row) => {
      const shard = Math.floor(row / info.rowsPerShard);
      const bytes = await this.file(info.shards[shard], (b) => b);
      const rows = Math.floor(bytes.length / (4 + dim));
      const r = row - shard * info.rowsPerShard;
      const scale = new DataView(bytes.buffer, bytes.byteOffset).getFloat32(4 * r, true);
      const vec = new Int8Array(bytes.buffer, bytes.byteOffset + 4 * rows + r * dim, dim);
      return Array.from(vec, (x) => x * scale);
    }));
  }
}
