// The scidx search page: search-as-you-type over GET search?q=, results grouped per page; or,
// on a static bundle (#app[data-bundle], written by toolup-rag export-web), over the bundle
// with its reader module, no server. No dependencies. Text from the index is only ever set with textContent, never parsed as HTML.
(function () {
  "use strict";

  var K = 20;

  var app = document.getElementById("app");
  var bundleUrl = app.getAttribute("data-bundle");
  // A bundle searches in the page itself, so it searches on every input, at once: a query
  // whose files are loaded takes a few ms, and a newer key cancels the older query before it
  // fetches its page fragments (run() aborts it). A server round trip waits for a pause.
  var DEBOUNCE_MS = bundleUrl ? 0 : 150;
  var bundle = null;
  var form = document.getElementById("search-form");
  var input = document.getElementById("q");
  var picker = document.getElementById("index");
  var statusLine = document.getElementById("status");
  var results = document.getElementById("results");

  var timer = 0;
  var controller = null;
  var sequence = 0;
  // While keys come less than TYPING_MS apart, a bundle search shows its best hit at once and
  // fetches the others' fragments only after REST_MS without a newer key: typed key by key, a
  // query's prefixes then fetch one fragment each instead of twenty.
  var TYPING_MS = 400, REST_MS = 150;
  var lastInput = -Infinity, typing = false;

  // --- docs versions (issue 40) ---
  // ?version= in the page's address (a docs site links its search page with the version being
  // read) searches that version ("*": all); without it, the one the site publishes at its root.
  var docVersion = new URL(window.location.href).searchParams.get("version") || null;
  // --- end docs versions ---
  // --- languages (issue 42): UI strings of the page's locale (data-strings), English defaults.
  var strings = {};
  try { strings = JSON.parse(app.getAttribute("data-strings") || "{}") || {}; } catch (e) { strings = {}; }
  function t(key, english, values) {
    if (typeof strings[key] !== "string") return english;
    var text = strings[key];
    Object.keys(values || {}).forEach(function (name) { text = text.split("{" + name + "}").join(values[name]); });
    return text;
  }
  // --- end of languages

  var indexes = [];
  try { indexes = JSON.parse(app.getAttribute("data-indexes") || "[]"); } catch (e) { indexes = []; }
  if (indexes.length > 1) {
    var all = document.createElement("option");
    all.value = "";
    all.textContent = t("all", "All indexes");
    picker.appendChild(all);
    indexes.forEach(function (name) {
      var option = document.createElement("option");
      option.value = name;
      option.textContent = name;
      picker.appendChild(option);
    });
    picker.hidden = false;
  }

  function setStatus(text, isError) {
    statusLine.textContent = text;
    statusLine.className = isError ? "error" : "";
  }

  function clearResults() {
    while (results.firstChild) results.removeChild(results.firstChild);
  }

  // Keep the query in the address bar, so reload, back and shared links show the same results.
  function rememberQuery(q) {
    var url = new URL(window.location.href);
    if (q) url.searchParams.set("q", q); else url.searchParams.delete("q");
    if (picker.value) url.searchParams.set("index", picker.value); else url.searchParams.delete("index");
    window.history.replaceState(null, "", url.toString());
  }

  function schedule() {
    var now = performance.now();
    typing = now - lastInput < TYPING_MS;
    lastInput = now;
    window.clearTimeout(timer);
    if (DEBOUNCE_MS) timer = window.setTimeout(run, DEBOUNCE_MS);
    else run();
  }

  function run() {
    var q = input.value.trim();
    // What was typed, trailing space included: a query ending inside a word completes it.
    var typed = input.value.replace(/^\s+/, "");
    var restDelay = typing ? REST_MS : 0; // only a search that a fast key started waits
    typing = false;
    if (controller) controller.abort();
    var mine = ++sequence;
    if (!q) {
      rememberQuery(q);
      shownFor = null;
      clearResults();
      setStatus("", false);
      return;
    }
    if (bundleUrl) {
      // The address bar follows once the results are in: history.replaceState costs a few ms
      // on every key, which a search in the page itself would wait for.
      controller = new AbortController();
      var first = function (hits) { if (mine === sequence) render(hits, q, true); };
      searchBundle(typed, controller.signal, first, restDelay).then(function (hits) {
        if (mine !== sequence) return;
        if (keepWhileTyping(hits, typed)) return;
        render(hits, q, false, hits.corrections);
        rememberQuery(q);
      }).catch(function (error) {
        if (mine !== sequence || (error && error.name === "AbortError")) return;
        clearResults();
        setStatus(t("failed", "Search failed: ") + (error && error.message ? error.message : error), true);
      });
      return;
    }
    rememberQuery(q);
    controller = new AbortController();
    var url = new URL("search", document.baseURI);
    url.searchParams.set("q", typed);
    url.searchParams.set("k", String(K));
    url.searchParams.set("prefix", "1"); // typed key by key: the last word may be unfinished
    if (picker.value) url.searchParams.set("index", picker.value);
    if (docVersion) url.searchParams.set("version", docVersion); // docs versions (issue 40)
    setStatus(t("searching", "Searching…"), false);
    fetch(url.toString(), { signal: controller.signal, headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (answer) {
        if (mine !== sequence) return; // a newer query is on its way
        if (!answer.ok) {
          if (semanticUnavailable(answer)) return keywordFallback(url, mine, q);
          clearResults();
          var message = answer.body && answer.body.error ? answer.body.error.message : "failed";
          setStatus(t("failed", "Search failed: ") + message, true);
          return;
        }
        var found = answer.body.hits || [];
        if (keepWhileTyping(found, typed)) return;
        render(found, q, false, answer.body.corrections);
      })
      .catch(function (error) {
        if (error && error.name === "AbortError") return;
        if (mine !== sequence) return;
        setStatus(t("failed", "Search failed: ") + (error && error.message ? error.message : error), true);
      });
  }

  // --- semantic fallback (issue 39) ---
  // A server whose query embeddings are slow or failing answers a hybrid search 503 with a
  // query_embedding_* code: the page then shows the keyword results and says what is missing.
  function semanticUnavailable(answer) {
    var code = answer.body && answer.body.error ? String(answer.body.error.code || "") : "";
    return code.indexOf("query_embedding_") === 0;
  }

  function keywordFallback(url, mine, q) {
    url.searchParams.set("mode", "keyword");
    fetch(url.toString(), { signal: controller.signal, headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (answer) {
        if (mine !== sequence) return;
        if (!answer.ok) {
          clearResults();
          setStatus("Search failed: semantic search is unavailable and keyword search failed", true);
          return;
        }
        var hits = answer.body.hits || [];
        render(hits, q);
        setStatus(hits.length
          ? "Semantic search is unavailable right now: showing keyword matches only."
          : "Semantic search is unavailable right now, and no keyword match for “" + q + "”.", false);
      })
      .catch(function (error) {
        if ((error && error.name === "AbortError") || mine !== sequence) return;
        setStatus("Search failed: " + (error && error.message ? error.message : error), true);
      });
  }
  // --- end semantic fallback (issue 39) ---

  // The bundle's reader is loaded on first use (import() from a classic script).
  function openBundle() {
    if (!bundle) {
      var reader = new URL(app.getAttribute("data-reader"), document.baseURI).href;
      bundle = import(reader).then(function (m) {
        return m.Bundle.open(new URL(bundleUrl, document.baseURI).href, window.scidxBundleOptions || {});
      }).then(function (b) { return b.table().then(function () { return b; }); });
      bundle.catch(function () { bundle = null; });
    }
    return bundle;
  }

  function searchBundle(q, signal, onFirst, restDelay) {
    return openBundle().then(function (b) {
      // Typed key by key: the last word may be unfinished (prefix), and typos are corrected.
      return b.search(q, { k: K, signal: signal, onFirst: onFirst, restDelay: restDelay, version: docVersion,
                           prefix: true });
    });
  }

  // Query words, for highlighting when the server sends no match ranges: a snippet word is
  // marked when it starts with a query word's stem-ish prefix ("configure" marks "configuration").
  function prefixes(q) {
    var words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
    var out = [];
    words.forEach(function (w) {
      if (w.length < 2) return;
      out.push(w.length <= 4 ? w : w.slice(0, Math.max(4, w.length - 3)));
    });
    return out;
  }

  function rangesFromServer(hit) {
    var raw = hit.highlights || hit.snippetHighlights || hit.snippet_highlights;
    if (!Array.isArray(raw)) return null;
    var out = [];
    raw.forEach(function (r) {
      var start = Array.isArray(r) ? r[0] : r && r.start;
      var end = Array.isArray(r) ? r[1] : r && r.end;
      if (typeof start === "number" && typeof end === "number" && end > start) out.push([start, end]);
    });
    return out;
  }

  function rangesFromQuery(text, stems) {
    var out = [];
    if (!stems.length) return out;
    var re = /[\p{L}\p{N}]+/gu;
    var m;
    while ((m = re.exec(text)) !== null) {
      var word = m[0].toLowerCase();
      for (var i = 0; i < stems.length; i++) {
        if (word.indexOf(stems[i]) === 0) { out.push([m.index, m.index + m[0].length]); break; }
      }
    }
    return out;
  }

  function highlighted(text, ranges) {
    var fragment = document.createDocumentFragment();
    var at = 0;
    ranges.sort(function (a, b) { return a[0] - b[0]; }).forEach(function (r) {
      var start = Math.max(r[0], at);
      var end = Math.min(r[1], text.length);
      if (end <= start) return;
      if (start > at) fragment.appendChild(document.createTextNode(text.slice(at, start)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(start, end);
      fragment.appendChild(mark);
      at = end;
    });
    if (at < text.length) fragment.appendChild(document.createTextNode(text.slice(at)));
    return fragment;
  }

  function hitLink(hit, label) {
    var element;
    if (hit.url) {
      element = document.createElement("a");
      element.href = hit.url;
    } else {
      // Without a urlTemplate the index has no link; show where the text is instead.
      element = document.createElement("span");
      element.className = "nolink";
      element.tabIndex = 0;
      element.title = hit.source + (hit.anchor ? "#" + hit.anchor : "");
    }
    element.className = (element.className + " hit").trim();
    element.textContent = label;
    return element;
  }

  // The page's address without the fragment: "docs.example.com/guide/cache/".
  function pageAddress(url) {
    if (!url) return "";
    try {
      var u = new URL(url, window.location.href);
      return (u.host + u.pathname).replace(/^\/+/, "");
    } catch (e) {
      return "";
    }
  }

  // A hit's headings under the page title its group already shows: "Cache › Size" → "Size".
  function breadcrumb(path, title) {
    var parts = path.slice();
    if (parts.length > 1 && parts[0] === title) parts.shift();
    return parts.join(" › ");
  }

  // --- search as you type (issue 38) ---
  // A word being typed that matches nothing yet keeps the results of the query before it, so
  // the list does not flash "No results" on every key of a long word; a finished word (a
  // space or punctuation after it) shows what it finds, nothing included.
  var shownFor = null; // what was typed when the results on screen were found
  function keepWhileTyping(hits, typed) {
    if (hits.length || shownFor === null || !/[\p{L}\p{N}_]$/u.test(typed)) return false;
    // Only while the same query is being extended: a new query shows its own (no) results.
    if (typed.length <= shownFor.length || typed.indexOf(shownFor) !== 0) return false;
    setStatus("Keep typing…", false);
    return true;
  }

  // The query as searched: each corrected word replaced by the word searched instead.
  function correctedQuery(q, corrections) {
    var out = q;
    (corrections || []).forEach(function (c) {
      if (!c || c.kind !== "typo" || typeof c.word !== "string" || typeof c.shown !== "string") return;
      var escaped = c.word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      out = out.replace(new RegExp("(^|[^\\p{L}\\p{N}_])" + escaped + "(?![\\p{L}\\p{N}_])", "giu"),
        function (all, before) { return before + c.shown; });
    });
    return out;
  }
  // --- end search as you type ---

  // partial: the best hits, shown while the rest of their page fragments arrive.
  function render(hits, q, partial, corrections) {
    shownFor = hits.length ? input.value.replace(/^\s+/, "") : null;
    clearResults();
    var stems = prefixes(q);
    var pages = [];
    var byKey = {};
    hits.forEach(function (hit) {
      var key = (hit.index || "") + "\u0000" + hit.source;
      if (!byKey[key]) {
        byKey[key] = { title: hit.title || hit.source, source: hit.source, index: hit.index,
                       url: hit.url, hits: [] };
        pages.push(byKey[key]);
      }
      byKey[key].hits.push(hit);
      (hit.sections || []).forEach(function (section) {
        byKey[key].hits.push(Object.assign({ title: hit.title, source: hit.source }, section));
      });
    });
    if (!hits.length) {
      setStatus(t("none", "No results for “" + q + "”.", { q: q }), false);
      return;
    }
    var list = document.createElement("ol");
    list.className = "pages";
    list.setAttribute("aria-label", t("grouped", "Results, grouped by page"));
    list.style.listStyle = "none";
    list.style.padding = "0";
    pages.forEach(function (page) {
      var item = document.createElement("li");
      var section = document.createElement("section");
      section.className = "page";
      var h2 = document.createElement("h2");
      h2.textContent = page.title;
      section.appendChild(h2);
      var where = document.createElement("p");
      where.className = "source";
      // A reader knows the page by its address, not by the repository file behind it; the
      // file is shown only when the index has no URLs.
      where.textContent = (indexes.length > 1 && page.index ? page.index + ": " : "") +
        (pageAddress(page.url) || page.source);
      section.appendChild(where);
      var ul = document.createElement("ul");
      page.hits.forEach(function (hit) {
        var li = document.createElement("li");
        var heading = breadcrumb(hit.headingPath || [], page.title) || hit.title || hit.source;
        li.appendChild(hitLink(hit, heading));
        var p = document.createElement("p");
        p.className = "snippet";
        var snippet = hit.snippet || "";
        var ranges = rangesFromServer(hit) || rangesFromQuery(snippet, stems);
        p.appendChild(highlighted(snippet, ranges));
        li.appendChild(p);
        ul.appendChild(li);
      });
      section.appendChild(ul);
      item.appendChild(section);
      list.appendChild(item);
    });
    results.appendChild(list);
    if (partial) {
      setStatus(t("more", "Loading more results…"), false);
      if (window.performance && performance.mark) performance.mark("scidx:first");
      return;
    }
    var n = hits.length;
    var searched = correctedQuery(q, corrections);
    setStatus(t("count", n + (n === 1 ? " result" : " results") + " on " + pages.length +
              (pages.length === 1 ? " page" : " pages") + " for “" + q + "”.",
              { n: String(n), p: String(pages.length), q: q }) +
              (searched !== q ? " " + t("showing", "— showing results for “" + searched + "”.", { q: searched }) : ""),
              false);
    if (window.performance && performance.mark) performance.mark("scidx:results");
  }

  // Keyboard: ↓/↑ walk the results, Home/End jump, Esc returns to the box, / focuses it.
  function hitsInOrder() {
    return Array.prototype.slice.call(results.querySelectorAll(".hit"));
  }

  function move(delta) {
    var all = hitsInOrder();
    if (!all.length) return;
    var at = all.indexOf(document.activeElement);
    var next = at < 0 ? (delta > 0 ? 0 : all.length - 1) : at + delta;
    if (next < 0) { input.focus(); return; }
    if (next >= all.length) next = all.length - 1;
    all[next].focus();
  }

  input.addEventListener("input", schedule);
  picker.addEventListener("change", run);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    window.clearTimeout(timer);
    run();
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var inBox = document.activeElement === input;
    if (event.key === "ArrowDown") {
      if (inBox || results.contains(document.activeElement)) { event.preventDefault(); move(1); }
    } else if (event.key === "ArrowUp") {
      if (results.contains(document.activeElement)) { event.preventDefault(); move(-1); }
    } else if (event.key === "Home" && results.contains(document.activeElement)) {
      event.preventDefault(); var first = hitsInOrder()[0]; if (first) first.focus();
    } else if (event.key === "End" && results.contains(document.activeElement)) {
      event.preventDefault(); var all = hitsInOrder(); if (all.length) all[all.length - 1].focus();
    } else if (event.key === "Escape") {
      if (inBox && input.value) { input.value = ""; run(); } else { input.focus(); }
    } else if (event.key === "/" && !inBox && document.activeElement !== picker) {
      event.preventDefault(); input.focus(); input.select();
    }
  });

  // The reader, manifest and page table (about 30 KB) load with the page, not on the first key.
  if (bundleUrl) openBundle().catch(function () { /* reported by the first search */ });

  // Start from ?q= (a shared link, or back/forward).
  var start = new URL(window.location.href);
  if (start.searchParams.get("index") && indexes.indexOf(start.searchParams.get("index")) >= 0) {
    picker.value = start.searchParams.get("index");
  }
  if (start.searchParams.get("q")) {
    input.value = start.searchParams.get("q");
    run();
  }
})();
