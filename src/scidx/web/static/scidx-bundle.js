// scidx static search reader: keyword (BM25) search over a bundle written by
// `toolup-rag export-web`, with the results of Index.search(..., mode="keyword"): the same
// tokenizer (scidx-tok-2, ported word for word from src/scidx/tokenize.py), the same float32
// impacts summed in the same order, the same order (score descending, chunk row ascending).
// Optional vector leg for semantic bundles: query vectors from an OpenAI-compatible
// /v1/embeddings endpoint; vector and hybrid modes rank as the index does, evidence rule
// included (index/search.py). ES module, no dependencies.

const FORMAT_MAJOR = "scidx-web/2";
export const TOKENIZER_VERSION = "scidx-tok-3";
/** Sub-results per page with group "page" (grouping.SUB_RESULTS). */
export const SUB_RESULTS = 3;

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
  if (CJK_ANY.test(run)) { cjkRunTerms(run, out); return; }
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
  return [...new Set(tokenizeIn(query))];
}

const WORD_TERMS = new Map();
/** The terms one \w+ run as written makes (tokenize.run_terms), memoised. */
export function wordTerms(word) {
  if (ANALYZER !== null) return tokenizeIn(word); // issue 42 (the analyzer memoises runs)
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

// --- languages (issue 42) ---
// CJK text has no spaces: overlapping bigrams inside each run of one script (kanji/hanzi and
// Hangul, hiragana, katakana), a lone character as itself (but a lone hiragana, a particle,
// is no term); Latin parts of a CJK run are words as anywhere else (tokenize._cjk_run_terms).
const CJK_RANGES = "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3040-\u309f\u30a0-\u30ff" +
  "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff" +
  "\uf900-\ufaff\uff66-\uffdc\u{1b000}-\u{1b16f}\u{20000}-\u{3347f}";
const CJK_ANY = new RegExp("[" + CJK_RANGES + "]", "u");
const CJK_PARTS = new RegExp("([" + CJK_RANGES + "]+)", "u");
const SCRIPTS = /[\u3040-\u309f]+|[\u30a0-\u30ff]+|[^\u3040-\u30ff]+/gu;

function script(ch) {
  if (!CJK_ANY.test(ch)) return 0;
  if (ch >= "\u3040" && ch <= "\u309f") return 1;
  return ch >= "\u30a0" && ch <= "\u30ff" ? 2 : 3;
}

function cjkRunTerms(run, out) {
  const parts = run.split(CJK_PARTS);
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j];
    if (!part) continue;
    if (j % 2 === 0) { runTerms(part, out); continue; }
    for (const m of part.matchAll(SCRIPTS)) {
      const seg = [...m[0]];
      if (seg.length === 1) {
        if (script(seg[0]) !== 1) out.push(seg[0]);
      } else {
        for (let i = 0; i + 1 < seg.length; i++) out.push(seg[i] + seg[i + 1]);
      }
    }
  }
}

// The end (UTF-16 index) of the CJK term starting at text[at], or at when none starts there
// (tokenize.cjk_unit_end).
function cjkUnitEnd(text, at) {
  const ch = String.fromCodePoint(text.codePointAt(at));
  const kind = script(ch);
  if (!kind) return at;
  const next = at + ch.length;
  if (next < text.length && script(String.fromCodePoint(text.codePointAt(next))) === kind) {
    return next + String.fromCodePoint(text.codePointAt(next)).length;
  }
  if (kind === 1) return at;
  if (at > 0) {
    const before = text.codePointAt(at - 1);
    const prev = (before >= 0xdc00 && before <= 0xdfff && at > 1)
      ? String.fromCodePoint(text.codePointAt(at - 2)) : String.fromCodePoint(before);
    if (script(prev) === kind) return at;
  }
  return next;
}

function cjkMatches(word, base, wanted, out) {
  for (const m of word.matchAll(/[^\p{L}\p{N}_]|[\p{L}\p{N}_]/gu)) {
    const at = m.index;
    const ch = m[0];
    if (CJK_ANY.test(ch)) {
      const end = cjkUnitEnd(word, at);
      if (end > at) {
        const t = normalize(word.slice(at, end));
        if (wanted.has(t)) out.push([base + at, base + end, t]);
      }
    } else if (at === 0 || CJK_ANY.test(cpBefore(word, at))) {
      const rest = word.slice(at).match(new RegExp("^[^" + CJK_RANGES + "]+", "u"));
      if (rest) {
        const key = wordTerms(rest[0]).find((t) => wanted.has(t));
        if (key !== undefined) out.push([base + at, base + at + rest[0].length, key]);
      }
    }
  }
}

function cpBefore(s, at) {
  const c = s.charCodeAt(at - 1);
  return c >= 0xdc00 && c <= 0xdfff && at > 1 ? String.fromCodePoint(s.codePointAt(at - 2)) : s[at - 1];
}

// Whether a cut at flat[at] is next to a CJK character (no spaces there: cut anywhere).
function cjkEdge(flat, at) {
  return at > 0 && at < flat.length &&
    (CJK_ANY.test(cpBefore(flat, at)) || CJK_ANY.test(String.fromCodePoint(flat.codePointAt(at))));
}
// Stemmed languages: a bundle whose pages are German, French, ... bundles the stemmers' module
// (manifest.stem, scidx-stem.js: stemmer(lang), stopWords(lang)); its queries and snippets
// are then tokenised as tokenize.tokenize_as does (tokenize._Analyzer).
const STEMMED = new Set(["de", "fr", "es", "pt", "it", "nl"]);
let ANALYZER = null; // { stem, stop, runs: Map } of the open bundle's language, null: English
const LETTERS_ONLY = /^\p{L}+$/u;

/** The language whose stemmer tokenises text of lang (tokenize.analyzer_language). */
export function analyzerLanguage(lang) {
  const primary = String(lang || "en").split("-")[0].toLowerCase();
  return STEMMED.has(primary) ? primary : "en";
}

/** Tokenise queries and snippets in lang with the stemmers of module (English: null). */
export function useLanguage(lang, module) {
  const l = analyzerLanguage(lang);
  ANALYZER = l === "en" || !module ? null
    : { stem: module.stemmer(l), stop: new Set(module.stopWords(l)), runs: new Map() };
}

function analyzerTerm(a, word) {
  if (a.stop.has(word)) return null;
  if ([...word].length === 1 && !ONE_DIGIT.test(word)) return null;
  return LETTERS_ONLY.test(word) ? a.stem(word) : word;
}

function analyzerRun(a, run, out) {
  let made = a.runs.get(run);
  if (made === undefined) {
    made = [];
    if (CJK_ANY.test(run)) {
      const parts = run.split(CJK_PARTS);
      for (let j = 0; j < parts.length; j++) {
        if (!parts[j]) continue;
        if (j % 2 === 0) analyzerRun(a, parts[j], made);
        else cjkRunTerms(parts[j], made);
      }
    } else if (run.includes("_")) {
      const parts = run.split("_").filter((p) => p);
      for (const p of parts) { const t = analyzerTerm(a, p); if (t !== null) made.push(t); }
      if (parts.length > 1) made.push(parts.join("_"));
    } else {
      const t = analyzerTerm(a, run);
      if (t !== null) made.push(t);
    }
    if (run.length <= 256) { if (a.runs.size > 100000) a.runs.clear(); a.runs.set(run, made); }
  }
  for (const t of made) out.push(t);
}

/** tokenize() in the open bundle's language (tokenize.tokenize_as). */
export function tokenizeIn(text) {
  if (ANALYZER === null) return tokenize(text);
  const out = [];
  for (const m of normalize(text).matchAll(WORD)) analyzerRun(ANALYZER, m[0], out);
  return out;
}
// --- end of languages (issue 42) ---

// ---- snippets (src/scidx/index/highlight.py) -------------------------------------------------

const LETTERS = /^[A-Za-z]+$/;

function matches(flat, wanted) {
  const out = [];
  if (!wanted.size || !flat) return out;
  // An ASCII-letter word's one term is its stem, and Porter2 keeps a word's first letter, so
  // a word whose first letter starts no wanted term is skipped without stemming it (stemming
  // every word of twenty chunks was most of a warm query's time).
  const firsts = new Set();
  for (const t of wanted) firsts.add(t[0]);
  for (const m of flat.matchAll(WORD)) {
    const w = m[0];
    if (CJK_ANY.test(w)) { cjkMatches(w, m.index, wanted, out); continue; }
    if (ANALYZER === null && !firsts.has(w[0].toLowerCase()) && LETTERS.test(w)) continue;
    const key = wordTerms(w).find((t) => wanted.has(t));
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
  if (start > 0 && flat[start - 1] !== " " && flat[start] !== " " && !cjkEdge(flat, start)) {
    const next = flat.indexOf(" ", start);
    if (next !== -1 && next < end) start = next + 1;
  }
  if (end < flat.length && flat[end] !== " " && flat[end - 1] !== " " && !cjkEdge(flat, end)) {
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

function varints(bytes, at, count, out, end = bytes.length) {
  for (let i = 0; i < count; i++) {
    let v = 0, shift = 0, b;
    do {
      if (at >= end) throw new Error("scidx bundle: a shard is truncated");
      b = bytes[at++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    out[i] = v;
  }
  return at;
}

// The row of term in the sorted terms (JavaScript's string order, as the exporter sorts), or -1.
function find(terms, term) {
  let lo = 0, hi = terms.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1, t = terms[mid];
    if (t === term) return mid;
    if (t < term) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

// A shard's terms are read at once, each term's postings only when a query asks for it: a
// shard holds a few thousand terms and a query needs one or two of them. Nothing is scanned
// up front: the impacts end the shard (4 bytes a posting), and where each term's row deltas
// start is found on the first lookup, in one pass, and kept for the next keystrokes.
function decodeShard(bytes) {
  if (bytes.length < 4) throw new Error("scidx bundle: a shard is truncated");
  const textLen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + textLen > bytes.length) throw new Error("scidx bundle: a shard is truncated");
  const terms = new TextDecoder().decode(bytes.subarray(4, 4 + textLen)).split("\n");
  const count = terms.length;
  const dfs = new Float64Array(count);
  const deltasAt = varints(bytes, 4 + textLen, count, dfs);
  const first = new Float64Array(count); // each term's first posting
  let total = 0;
  for (let i = 0; i < count; i++) { first[i] = total; total += dfs[i]; }
  const planes = bytes.length - 4 * total;
  if (planes < deltasAt) throw new Error("scidx bundle: a shard is truncated");
  let starts = null; // each term's first delta byte
  const done = new Map();
  return {
    get(term) {
      const i = find(terms, term);
      if (i < 0) return undefined;
      let found = done.get(i);
      if (found) return found;
      if (starts === null) {
        starts = new Uint32Array(count);
        let p = deltasAt;
        for (let t = 0; t < count; t++) {
          starts[t] = p;
          for (let seen = 0, df = dfs[t]; seen < df; p++) {
            if (p >= planes) throw new Error("scidx bundle: a shard is truncated");
            if (!(bytes[p] & 0x80)) seen++;
          }
        }
      }
      const df = dfs[i], start = first[i];
      const docs = new Int32Array(df);
      let p = starts[i], row = 0;
      for (let j = 0; j < df; j++) {
        let v = 0, shift = 0, b;
        do {
          if (p >= planes) throw new Error("scidx bundle: a shard is truncated");
          b = bytes[p++];
          v += (b & 0x7f) * 2 ** shift;
          shift += 7;
        } while (b & 0x80);
        row += v;
        docs[j] = row;
      }
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

// Rows at most this many: a (score, row) pair fits one float64 key (32 + 21 bits).
const ROW_KEYS = 2 ** 21;

/**
 * rows and their float32 scores (a Float32Array) ordered as scidx orders results: score
 * descending, then row ascending. One native sort of float64 keys, no comparator: a
 * float32's bits made order-preserving as a uint32 (NaN lowest), times 2^21, plus the row
 * reversed. A four-word query ranks thousands of rows, where a comparator sort cost more
 * than the rest of the query.
 */
export function orderHits(rows, scores) {
  const m = rows.length;
  const outRows = new Int32Array(m), outBits = new Uint32Array(m);
  const bits = new Uint32Array(scores.buffer, scores.byteOffset, m);
  let top = 0;
  for (let i = 0; i < m; i++) if (rows[i] > top) top = rows[i];
  if (top < ROW_KEYS) {
    const keys = new Float64Array(m);
    for (let i = 0; i < m; i++) {
      const u = bits[i];
      const t = (u & 0x7fffffff) > 0x7f800000 ? 0 : u & 0x80000000 ? ~u >>> 0 : (u | 0x80000000) >>> 0;
      keys[i] = t * ROW_KEYS + (ROW_KEYS - 1 - rows[i]);
    }
    keys.sort();
    for (let j = 0; j < m; j++) {
      const key = keys[m - 1 - j];
      const t = Math.floor(key / ROW_KEYS);
      outRows[j] = ROW_KEYS - 1 - (key - t * ROW_KEYS);
      outBits[j] = t === 0 ? 0x7fc00000 : t >= 0x80000000 ? t - 0x80000000 : ~t >>> 0;
    }
  } else {
    const order = Array.from({ length: m }, (_, i) => i);
    const key = (i) => (scores[i] === scores[i] ? scores[i] : -Infinity);
    order.sort((a, b) => key(b) - key(a) || rows[a] - rows[b]);
    order.forEach((i, j) => { outRows[j] = rows[i]; outBits[j] = bits[i]; });
  }
  return { rows: outRows, scores: new Float32Array(outBits.buffer) };
}

/**
 * The best m of rows and their float32 scores, in orderHits' order. A bounded heap (its root
 * the worst kept) makes one pass, where ordering every hit of a four-word query (thousands)
 * to show twenty cost more than the rest of the ranking.
 */
export function bestHits(rows, scores, m) {
  const n = rows.length;
  if (m >= n / 4) {
    const all = orderHits(rows, scores);
    return m >= n ? all : { rows: all.rows.subarray(0, m), scores: all.scores.subarray(0, m) };
  }
  // Inline, no helper calls: this loop runs before the page's code is optimised, and the
  // interpreter pays for every call. Most rows lose to the root in one comparison.
  const hr = new Int32Array(m), hs = new Float64Array(m);
  let size = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i], x = scores[i];
    let c;
    if (size < m) {
      c = size++;
      while (c > 0) { // sift up: the parent moves down while the new row is worse than it
        const up = (c - 1) >> 1, y = hs[up];
        if (!(x < y || (x === y && r > hr[up]))) break;
        hr[c] = hr[up]; hs[c] = y; c = up;
      }
    } else if (x > hs[0] || (x === hs[0] && r < hr[0])) {
      c = 0;
      for (;;) { // sift down: the worse child moves up while it is worse than the new row
        const a = 2 * c + 1;
        if (a >= m) break;
        let w = a;
        const b = a + 1;
        if (b < m && (hs[b] < hs[a] || (hs[b] === hs[a] && hr[b] > hr[a]))) w = b;
        const y = hs[w];
        if (!(y < x || (y === x && hr[w] > r))) break;
        hr[c] = hr[w]; hs[c] = y; c = w;
      }
    } else continue;
    hr[c] = r; hs[c] = x;
  }
  return orderHits(hr, Float32Array.from(hs));
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
// --- typo tolerance and search as you type (issue 38) ---
// The rules of src/scidx/index/expand.py over the bundle's word dictionary (FORMAT.md §2.14,
// web_bundle._dictionary_shards), step for step, so both give the same terms, weights and
// corrections: a query word of 5+ letters whose term is unknown or in at most 2 chunks also
// matches the corpus words within one edit (two from 9 letters) whose terms are in 2+ chunks
// and 10x the typed term's; the last word of a query typed key by key also matches the terms
// of the most frequent words it starts. A word's alternatives score their best weighted
// impact, never a sum. Look-ups read the one to four dictionary shards of a key's range.

export const EXPAND = Object.freeze({
  FUZZY_MIN_CHARS: 5, FUZZY_TWO_CHARS: 9, FUZZY_RARE_DF: 2, FUZZY_MIN_DF: 2, FUZZY_RATIO: 10,
  FUZZY_TERMS: 2, FUZZY_WEIGHT: 0.8, PREFIX_MIN_CHARS: 2, PREFIX_TERMS: 2, PREFIX_WEIGHT: 0.5,
  PREFIX_ALWAYS: true, PREFIX_DEMOTE: true, MAX_EXPANDED: 32, MAX_WORD_CHARS: 32,
  MAX_KEY_RANGE: 4096, MAX_COMPLETIONS: 64,
});
const TOP_CHAR = "\u{10FFFF}";
const ALPHA = /^\p{L}+$/u;
const TYPING = /[\p{L}\p{N}_]$/u;

// Python compares str by code point; JavaScript by UTF-16 unit. Moving the surrogates above
// U+FFFF (and U+E000-U+FFFF below them) makes unit order code point order.
const unitKey = (u) => (u >= 0xd800 ? (u >= 0xe000 ? u - 0x800 : u + 0x2000) : u);
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return unitKey(x) - unitKey(y);
  }
  return a.length - b.length;
}
const cpLess = (a, b) => compareCodePoints(a, b) < 0;

/** Optimal string alignment distance of two code point arrays, or limit + 1 above it. */
export function editDistance(a, b, limit) {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  a = a.slice(i); b = b.slice(i);
  let j = 0;
  while (j < a.length && j < b.length && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  if (j) { a = a.slice(0, a.length - j); b = b.slice(0, b.length - j); }
  const la = a.length, lb = b.length, big = limit + 1;
  if (!la || !lb) return la + lb <= limit ? la + lb : big;
  let prev2 = [], prev = Array.from({ length: lb + 1 }, (_, y) => y);
  for (let x = 1; x <= la; x++) {
    const cur = [x, ...new Array(lb).fill(big)];
    const lo = Math.max(1, x - limit), hi = Math.min(lb, x + limit), ca = a[x - 1];
    let best = lo === 1 ? cur[0] : big;
    for (let y = lo; y <= hi; y++) {
      const cb = b[y - 1];
      let v = Math.min(prev[y] + 1, cur[y - 1] + 1, prev[y - 1] + (ca === cb ? 0 : 1));
      if (x > 1 && y > 1 && ca === b[y - 2] && a[x - 2] === cb) v = Math.min(v, prev2[y - 2] + 1);
      cur[y] = v;
      if (v < best) best = v;
    }
    if (best > limit) return big;
    prev2 = prev; prev = cur;
  }
  return prev[lb] <= limit ? prev[lb] : big;
}

function lowerBound(keys, key) { // the first index whose key is >= key (code point order)
  let lo = 0, hi = keys.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (cpLess(keys[mid], key)) lo = mid + 1; else hi = mid; }
  return lo;
}

function decodeWords(bytes, count, withFreq) {
  const head = withFreq ? count : 0;
  if (bytes.length < head) throw new Error("scidx bundle: a dictionary shard is truncated");
  const words = count ? new TextDecoder().decode(bytes.subarray(head)).split("\n") : [];
  if (words.length !== count) throw new Error("scidx bundle: a dictionary shard is truncated");
  return { words, freq: bytes.subarray(0, head) };
}

/**
 * The words of [key, key + U+10FFFF) in a sharded sorted list: [{ word, freq, index }];
 * withFreq: the list's shards start with frequency bytes (the forward list's do, the
 * reversed list's do not; a shard file is decoded once, so each list always says the same).
 */
async function keyRange(bundle, shards, key, withFreq, cap) {
  if (!shards || !shards.length) return [];
  const end = key + TOP_CHAR;
  let first = 0;
  while (first + 1 < shards.length && !cpLess(key, shards[first + 1][0])) first++;
  let last = first;
  while (last + 1 < shards.length && cpLess(shards[last + 1][0], end)) last++;
  if (cap !== undefined && last - first - 1 > Math.ceil(cap / DICT_WORDS_MIN(shards))) return null;
  const out = [];
  for (let s = first; s <= last; s++) {
    const [, name, count] = shards[s];
    const { words, freq } = await bundle.file(name, (b) => decodeWords(b, count, withFreq));
    const lo = lowerBound(words, key), hi = lowerBound(words, end);
    for (let i = lo; i < hi; i++) out.push({ word: words[i], freq: withFreq ? freq[i] : 0, index: out.length });
  }
  if (cap !== undefined && out.length > cap) return null;
  return out;
}
// The fewest words of an interior shard (all but the last are full): bounds a range unread.
const DICT_WORDS_MIN = (shards) => Math.max(1, Math.min(...shards.slice(0, -1).map((e) => e[2]), Infinity));

const reverseWord = (w) => Array.from(w).reverse().join("");

async function neighbours(bundle, word, limit) {
  const chars = Array.from(word);
  if (!chars.length || chars.length > EXPAND.MAX_WORD_CHARS || limit <= 0) return [];
  const dict = bundle.manifest.dictionary;
  const a = chars.length >> 1, b = chars.length - 1 - a;
  const seen = new Set();
  if (a) {
    const found = await keyRange(bundle, dict.words, chars.slice(0, a).join(""), true, EXPAND.MAX_KEY_RANGE);
    if (found) for (const e of found) seen.add(e.word);
  }
  if (b) {
    const key = chars.slice(chars.length - b).reverse().join("");
    const found = await keyRange(bundle, dict.reversed, key, false, EXPAND.MAX_KEY_RANGE);
    if (found) for (const e of found) seen.add(reverseWord(e.word));
  }
  const out = [];
  for (const other of seen) {
    const oc = Array.from(other);
    if (Math.abs(oc.length - chars.length) > limit || other === word) continue;
    const d = editDistance(chars, oc, limit);
    if (d <= limit) out.push([other, d]);
  }
  return out;
}

async function completions(bundle, prefix) {
  const n = Array.from(prefix).length;
  if (!n || n > EXPAND.MAX_WORD_CHARS) return [];
  const found = await keyRange(bundle, bundle.manifest.dictionary.words, prefix, true);
  found.sort((x, y) => y.freq - x.freq || x.index - y.index);
  return found.slice(0, EXPAND.MAX_COMPLETIONS).map((e) => e.word);
}

async function termDf(bundle, term) {
  const p = await bundle.postings(term);
  return p ? p.docs.length : 0;
}

async function typoOf(bundle, run, term) {
  const df = await termDf(bundle, term);
  if (df > EXPAND.FUZZY_RARE_DF) return [];
  const limit = Array.from(run).length >= EXPAND.FUZZY_TWO_CHARS ? 2 : 1;
  const need = Math.max(EXPAND.FUZZY_MIN_DF, EXPAND.FUZZY_RATIO * df);
  const found = [];
  for (const [word, d] of await neighbours(bundle, run, limit)) {
    const made = wordTerms(word);
    if (made.length !== 1 || made[0] === term) continue;
    const f = await termDf(bundle, made[0]);
    if (f >= need) found.push([d, -f, word, made[0]]);
  }
  if (!found.length) return [];
  const best = Math.min(...found.map((x) => x[0]));
  const tier = found.filter((x) => x[0] === best)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1] || compareCodePoints(x[2], y[2]) || compareCodePoints(x[3], y[3]));
  const out = [];
  for (const [, , word, other] of tier) if (out.every(([t]) => t !== other)) out.push([other, word]);
  return out.slice(0, EXPAND.FUZZY_TERMS);
}

async function completionsOf(bundle, run, term) {
  const out = [];
  for (const word of await completions(bundle, run)) {
    const made = wordTerms(word);
    if (made.length !== 1 || made[0] === term || out.some(([t]) => t === made[0])) continue;
    if (await termDf(bundle, made[0])) {
      out.push([made[0], word]);
      if (out.length >= EXPAND.PREFIX_TERMS) break;
    }
  }
  return out;
}

/**
 * expand.expand_query: { terms (every term, for snippets), groups (per term, [[term, weight]],
 * or null: no expansion), corrections ([{ word, shown, kind, terms }]), text (what the vector
 * leg embeds) }.
 */
export async function expandQuery(bundle, query, { fuzzy = true, prefix = false } = {}) {
  query = String(query || "");
  const text = query.trim();
  const terms = text ? queryTerms(text) : [];
  const dict = bundle.manifest.dictionary;
  const plain = { terms, groups: null, corrections: [], text };
  if (!dict || !dict.words.length || !(fuzzy || prefix) || !text) return plain;
  if (bundle.manifest.expands === false) return plain; // pages not all English (issue 42)
  const runs = Array.from(normalize(text).matchAll(WORD), (m) => m[0]);
  const typing = prefix && TYPING.test(query) && runs.length > 0;
  const extra = new Map(), corrections = [], replaced = new Map(), demoted = new Set();
  let looked = 0;
  const add = (key, alts, weight) => {
    if (!extra.has(key)) extra.set(key, []);
    for (const [t] of alts) extra.get(key).push([t, weight]);
  };
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i], last = typing && i === runs.length - 1, chars = Array.from(run).length;
    if ((looked >= EXPAND.MAX_EXPANDED && !last) || chars > EXPAND.MAX_WORD_CHARS || run.includes("_")) continue;
    const made = wordTerms(run);
    const term = made.length === 1 ? made[0] : null;
    let completed = false;
    if (last && chars >= EXPAND.PREFIX_MIN_CHARS && (term !== null || !made.length)) {
      const known = term !== null && (await termDf(bundle, term)) > 0;
      if (EXPAND.PREFIX_ALWAYS || !known) {
        looked++;
        const done = await completionsOf(bundle, run, term);
        if (done.length) {
          add(term !== null ? term : run, done, EXPAND.PREFIX_WEIGHT);
          if (term !== null && EXPAND.PREFIX_DEMOTE) {
            const df = await termDf(bundle, term);
            const other = await termDf(bundle, done[0][0]);
            if (df <= EXPAND.FUZZY_RARE_DF && other >= Math.max(EXPAND.FUZZY_MIN_DF, EXPAND.FUZZY_RATIO * df)) demoted.add(term);
          }
          corrections.push({ word: run, shown: done[0][1], kind: "prefix", terms: done.map(([t]) => t) });
          if (!known && !replaced.has(i)) replaced.set(i, done[0][1]);
          completed = true;
        }
      }
    }
    if (fuzzy && term !== null && chars >= EXPAND.FUZZY_MIN_CHARS && ALPHA.test(run) && !completed) {
      looked++;
      const found = await typoOf(bundle, run, term);
      if (found.length) {
        add(term, found, EXPAND.FUZZY_WEIGHT);
        corrections.push({ word: run, shown: found[0][1], kind: "typo", terms: found.map(([t]) => t) });
        replaced.set(i, found[0][1]);
      }
    }
  }
  if (!extra.size) return plain;
  const group = (t, alts, down) => {
    const out = new Map(t === null ? [] : [[t, down ? EXPAND.PREFIX_WEIGHT : 1.0]]);
    for (const [a, w] of alts) if ((out.get(a) ?? 0) < w) out.set(a, w);
    return [...out];
  };
  const groups = [];
  for (const t of terms) { groups.push(group(t, extra.get(t) || [], demoted.has(t))); extra.delete(t); }
  for (const alts of extra.values()) groups.push(group(null, alts, false));
  const listed = [...terms];
  for (const g of groups) for (const [t] of g) if (!listed.includes(t)) listed.push(t);
  const embed = replaced.size ? runs.map((r, i) => (replaced.has(i) ? replaced.get(i) : r)).join(" ") : text;
  return { terms: listed, groups, corrections, text: embed };
}

/** expand.weighted_postings: each group's best weighted impact per chunk, groups in order. */
async function weightedPostings(bundle, expansion) {
  if (!expansion.groups) return (await Promise.all(expansion.terms.map((t) => bundle.postings(t)))).filter((p) => p);
  const out = [];
  for (const g of expansion.groups) {
    if (g.length === 1 && g[0][1] === 1.0) {
      const p = await bundle.postings(g[0][0]);
      if (p) out.push(p);
      continue;
    }
    const best = new Map();
    for (const [t, w] of g) {
      const p = await bundle.postings(t);
      if (!p) continue;
      const f = Math.fround(w);
      for (let i = 0; i < p.docs.length; i++) {
        const v = w === 1.0 ? p.weights[i] : Math.fround(p.weights[i] * f);
        const d = p.docs[i];
        if (!best.has(d) || best.get(d) < v) best.set(d, v);
      }
    }
    if (!best.size) continue;
    const docs = Int32Array.from([...best.keys()].sort((x, y) => x - y));
    out.push({ docs, weights: Float32Array.from(docs, (d) => best.get(d)) });
  }
  return out;
}
// --- end typo tolerance and search as you type ---

export class Bundle {
  constructor(url, manifest) {
    this.url = url;
    this.manifest = manifest;
    this.n = manifest.chunks;
    this.files = new Map();
    this.loaded = new Set(); // the names of the files in memory (fetched and decoded)
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
    // Issue 42: queries in the index's language (its stemmers' module is bundled).
    if (manifest.stem) useLanguage(manifest.language, await import(new URL(manifest.stem, bundle.url).href));
    else useLanguage("en", null);
    return bundle;
  }

  file(name, decode, priority = "auto") {
    let found = this.files.get(name);
    if (!found) {
      found = fetch(new URL(name, this.url), { priority }).then(inflate).then(decode);
      found.then(() => this.loaded.add(name), () => this.files.delete(name));
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

  /**
   * Every keyword hit of query, unordered: { terms, rows (Int32Array), scores (float32) }, the
   * sums bm25.keyword_top_k ranks.
   */
  async scored(query, options = {}) {
    const expansion = await expandQuery(this, query, options);
    const terms = expansion.terms;
    const lists = await weightedPostings(this, expansion);
    if (!lists.length) return { terms, expansion, rows: new Int32Array(0), scores: new Float32Array(0) };
    let rows, scores;
    if (lists.length === 1) {
      rows = lists[0].docs;
      scores = lists[0].weights;
    } else {
      // Summed in float64 in query-term order, then rounded to float32 (as np.bincount does).
      // The dense buffers are the bundle's, zeroed again after each query.
      const sums = this.sums || (this.sums = new Float64Array(this.n));
      const marks = this.marks || (this.marks = new Uint8Array(this.n));
      let total = 0;
      for (const { docs } of lists) total += docs.length;
      const seen = new Int32Array(total);
      let m = 0;
      for (const { docs, weights } of lists) {
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i];
          if (!marks[d]) { marks[d] = 1; seen[m++] = d; }
          sums[d] += weights[i];
        }
      }
      rows = seen.subarray(0, m);
      scores = new Float32Array(m);
      for (let i = 0; i < m; i++) { const d = rows[i]; scores[i] = sums[d]; sums[d] = 0; marks[d] = 0; }
    }
    let live = 0; // impacts are positive; a zero sum is no hit
    for (let i = 0; i < rows.length; i++) if (scores[i] > 0) live++;
    if (live < rows.length) {
      const r = new Int32Array(live), s = new Float32Array(live);
      for (let i = 0, j = 0; i < rows.length; i++) if (scores[i] > 0) { r[j] = rows[i]; s[j++] = scores[i]; }
      rows = r; scores = s;
    }
    return { terms, expansion, rows, scores };
  }

  /** Keyword ranking: the best k [{row, score}] as bm25.keyword_top_k ranks them, and the terms. */
  async rank(query, k = 10, options = {}) {
    const hit = await this.scored(query, options);
    const { rows, scores } = bestHits(hit.rows, hit.scores, k), terms = hit.terms;
    const ranked = [];
    for (let i = 0; i < Math.min(k, rows.length); i++) ranked.push({ row: rows[i], score: scores[i] });
    return { terms, ranked };
  }

  // --- docs versions (issue 40) ---
  // A versioned bundle (manifest.versions, the page table's pageVersions) searches one version:
  // options.version, "*" for all, or by default manifest.versions.default, as Index.search
  // does (scidx.index.versions); pages with no version (-1) are kept in every version.

  /** The ranking best(m) restricted to the rows of `version` (best itself when unversioned). */
  async inVersion(best, version) {
    const info = this.manifest.versions;
    if (!info || version === "*") return best;
    const name = version === undefined || version === null || version === "" ? info.default : String(version);
    const want = info.names.indexOf(name);
    if (want < 0) {
      throw new Error("scidx bundle: unknown version " + JSON.stringify(name) + "; this bundle has " +
        info.names.map((n) => JSON.stringify(n)).join(", ") + " (or \"*\" for all versions)");
    }
    const table = await this.table();
    const runs = table.pageVersions || [];
    let kept = null;
    return (m) => {
      if (kept === null) {
        const all = best(Infinity), rows = [], scores = [];
        for (let i = 0; i < all.rows.length; i++) {
          const v = runs[last(table.pageStarts, all.rows[i])];
          if (v === -1 || v === want) { rows.push(all.rows[i]); scores.push(all.scores[i]); }
        }
        kept = { rows: Int32Array.from(rows), scores: Float32Array.from(scores) };
      }
      return { rows: kept.rows.subarray(0, m), scores: kept.scores.subarray(0, m) };
    };
  }

  /** A hit with its page's `version` (as Hit.to_dict: only for a page that has one). */
  withVersion(hit, table) {
    const info = this.manifest.versions;
    if (!info || !table.pageVersions) return hit;
    const v = table.pageVersions[last(table.pageStarts, hit.row)];
    if (v >= 0) hit.version = info.names[v];
    return hit;
  }
  // --- end docs versions (issue 40) ---

  table() {
    return this.file(this.manifest.pages, (b) => {
      const t = JSON.parse(new TextDecoder().decode(b));
      const sums = (deltas) => { let at = 0; return deltas.map((d) => (at += d)); };
      t.pageStarts = sums(t.pageRows);
      t.sectionStarts = sums(t.sectionRows);
      return t;
    });
  }

  // Which fragment file holds row, and where in it.
  piece(table, row) {
    const lo = last(table.pageStarts, row);
    const at = row - table.pageStarts[lo], per = table.pageChunks;
    const piece = Math.floor(at / per);
    return { name: "pages/" + table.files[lo] + "-" + piece + ".bin", at: at - piece * per };
  }

  async page(row, priority = "auto") {
    const table = await this.table();
    const { name, at } = this.piece(table, row);
    const frag = await this.file(name, (b) => JSON.parse(new TextDecoder().decode(b)), priority);
    const chunk = frag.chunks[at];
    if (!chunk) throw new Error("scidx bundle: a page fragment lacks row " + row);
    return { frag, chunk };
  }

  /**
   * The results of a ranking grouped as grouping.group_rows does: [{ row, score, sections:
   * [{ row, score }] }], at most k. best(m) gives the ranking's first m rows ({ rows, scores }:
   * fewer when it has fewer). "section": the first k distinct sections. "page": one result per
   * page, its best section, and up to SUB_RESULTS of the page's other sections among the
   * candidates, which are the searcher's (Searcher.choose: the best max(4k, 32) rows, widened
   * 4x until k pages are found or the ranking runs out): which sections a page collects
   * depends on that cut. null: the first k rows.
   */
  async group(best, k, group) {
    if (!group) {
      const { rows, scores } = best(k);
      return Array.from(rows, (row, i) => ({ row, score: scores[i], sections: [] }));
    }
    if (group !== "section" && group !== "page") {
      throw new Error("scidx bundle: group must be \"section\", \"page\" or null, not " + JSON.stringify(group));
    }
    const table = await this.table();
    const section = (row) => { const run = last(table.sectionStarts, row); return table.sectionIds ? table.sectionIds[run] : run; };
    const page = (row) => { const run = last(table.pageStarts, row); return table.pageIds ? table.pageIds[run] : run; };
    // Section grouping's answer does not depend on the cut; start just above k, as Python does.
    for (let want = group === "section" ? k + Math.max(k >> 1, 4) : Math.max(4 * k, 32); ; want *= 4) {
      const { rows, scores } = best(want);
      const out = group === "section" ? this.bySection(rows, scores, k, section) : this.byPage(rows, scores, k, section, page);
      if (out.length >= k || rows.length < want || want >= this.n) return out;
    }
  }

  bySection(rows, scores, k, section) {
    const seen = new Set();
    const out = [];
    for (let i = 0; i < rows.length && out.length < k; i++) {
      const key = section(rows[i]);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ row: rows[i], score: scores[i], sections: [] });
    }
    return out;
  }

  byPage(rows, scores, k, section, page) {
    const out = [], pages = new Map();
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i], key = page(row);
      let entry = pages.get(key);
      if (entry === undefined) {
        if (pages.size === k) continue; // a page beyond the k-th: only known pages collect sections
        entry = { hit: { row, score: scores[i], sections: [] }, seen: new Set() };
        pages.set(key, entry);
        out.push(entry.hit);
      }
      const s = section(row);
      if (entry.seen.has(s)) continue;
      entry.seen.add(s);
      if (row !== entry.hit.row && entry.hit.sections.length < SUB_RESULTS) entry.hit.sections.push({ row, score: scores[i] });
    }
    return out;
  }

  /**
   * Hits with the fields of scidx's Hit.to_dict (no full text), best first: the results of
   * Index.search(query, k, mode, group) for group "section" (the default), "page" (each hit's
   * `sections`: its page's other best sections, the same fields) or null (raw chunks).
   * options.signal (an AbortSignal): a query made stale by a newer one stops at its next step
   * (before its page fragments are fetched) with an AbortError; files already on their way
   * still arrive and are kept. options.onFirst(hits): called once with the best hit alone as
   * soon as its page fragments are in, before the others' are fetched, so a page can show it
   * at once; not called when the others' fragments are in memory already.
   * options.restDelay (ms): how long after onFirst to wait before fetching the others' (a
   * query made stale meanwhile fetches none: search-as-you-type updates the best hit on
   * every key and the rest once typing pauses).
   */
  async search(query, options = {}) {
    const k = options.k || 10;
    const group = options.group === undefined ? "section" : options.group;
    const mode = options.mode || "hybrid";
    const signal = options.signal || null;
    const semantic = mode !== "keyword" && this.embed && this.manifest.vectors;
    const scored = await this.scored(query, { fuzzy: options.fuzzy ?? true, prefix: options.prefix ?? false });
    signal?.throwIfAborted();
    let best = (m) => bestHits(scored.rows, scored.scores, m);
    if (semantic) { // the vector leg embeds the corrected query (expand.QueryTerms.text)
      const fused = await this.fuse(scored.expansion.text, best(Infinity), mode === "vector");
      best = (m) => ({ rows: fused.rows.subarray(0, m), scores: fused.scores.subarray(0, m) });
    }
    best = await this.inVersion(best, options.version); // docs versions (issue 40)
    const results = await this.group(best, k, group);
    signal?.throwIfAborted();
    mark("scidx:ranked");
    const terms = scored.terms, chars = options.snippetChars || 240;
    const hit = ({ row, score }, priority) => this.page(row, priority).then(({ frag, chunk }) => {
      const [id, anchor, headingPath, url, flat, code] = chunk;
      const s = snippet(flat, code, terms, chars);
      const out = { id, row, score, source: frag.source, title: frag.title, anchor, headingPath, url: this.link(url),
        snippet: s.text, highlights: s.highlights, snippetCode: s.code, sections: [] };
      return this.withVersion(out, table);
    });
    const hits = new Array(results.length);
    const fill = (r, i) => Promise.all([hit(r, i ? "low" : "high"), ...r.sections.map((sub) => hit(sub, i ? "low" : "high"))])
      .then(([main, ...subs]) => { main.sections = subs; hits[i] = main; });
    // The best result first, alone, then the others: a fetch() costs the page about a
    // millisecond even from the HTTP cache, and twenty of them issued together held the first
    // result back by as much; so its fragments travel first and onFirst shows it while the
    // others' are fetched. Fragments already in memory (a next keystroke) need no such step.
    const table = await this.table();
    const waiting = results.slice(1).some((r) => [r, ...r.sections].some(({ row }) => !this.loaded.has(this.piece(table, row).name)));
    if (waiting) {
      await fill(results[0], 0);
      signal?.throwIfAborted();
      if (options.onFirst) options.onFirst(hits.slice(0, 1));
      if (options.restDelay > 0) { // typing: a newer key within it fetches none of the rest
        signal?.throwIfAborted();
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, options.restDelay);
          signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
        });
        signal?.throwIfAborted();
      }
    }
    await Promise.all(results.map((r, i) => (waiting && i === 0 ? null : fill(r, i))));
    signal?.throwIfAborted();
    mark("scidx:fetched");
    hits.corrections = scored.expansion.corrections; // what was corrected or completed
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
   * least the manifest's fusion.vectorFloor; no floor: none) are hits. A ranking in, a
   * ranking ({ rows, scores }, best first) out.
   */
  async fuse(text, ranking, vectorOnly) {
    const none = { rows: new Int32Array(0), scores: new Float32Array(0) };
    if (!text) return none;
    const f = this.manifest.fusion || {};
    const alpha = f.alpha ?? 0.3, docs = f.prfDocs ?? 3, beta = f.prfBeta ?? 2, floor = f.vectorFloor ?? null;
    let q = await this.queryVector(text);
    if (!q && vectorOnly) return none;
    const ranked = [];
    for (let i = 0; i < ranking.rows.length; i++) ranked.push({ row: ranking.rows[i], score: ranking.scores[i] });
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
    const rows = [];
    for (let i = 0; i < this.n; i++) if (keep[i] && (vectorOnly || Math.fround(fused[i]) > 0)) rows.push(i);
    return orderHits(Int32Array.from(rows), Float32Array.from(rows, (row) => fused[row]));
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
