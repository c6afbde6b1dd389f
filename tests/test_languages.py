"""Languages (issue 42): CJK bigrams, page languages, the language filter, JS parity."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import scidx
from scidx.errors import CorruptIndexError
from scidx.index.highlight import build_snippet, flatten
from scidx.index.languages import page_languages
from scidx.pack.language import detect_language, language_tag
from scidx.pack.packer import pack_records
from scidx.pack.records import Record
from scidx.tokenize import tokenize, tokenize_as

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "src" / "scidx" / "web" / "static" / "scidx-bundle.js"


def test_cjk_runs_become_bigrams_and_latin_words_stay_words() -> None:
    assert tokenize("组件注册") == ["组件", "件注", "注册"]
    assert tokenize("用docker部署 8080端口") == ["用", "docker", "部署", "8080", "端口"]
    # Scripts meet at word boundaries in Japanese; a lone hiragana (a particle) is no term.
    assert tokenize("トレースを送信する") == ["トレ", "レー", "ース", "送信", "する"]
    # Hangul: a particle glued to a word keeps the word's bigram.
    assert "설정" in tokenize("설정을") and "설정" in tokenize("설정")
    # English is unchanged.
    assert tokenize("How do I configure CORS?") == ["configur", "cor"]


def test_bad_input_is_bounded_and_never_crashes() -> None:
    long_run = "中" * 10_000
    assert len(tokenize(long_run)) == 9_999
    for text in ("e\u0301\u0301 😀😀 中😀文", "\ud800中\udfff", "a中b文c_d中", "ｶﾞｷﾞ 𠀀𠀁"):
        tokenize(text)
        tokenize_as(text, "de")
        build_snippet(text, tokenize(text), 40)


def test_snippets_cut_cjk_text_in_characters() -> None:
    text = "前文" * 200 + "插件的数据文件该放在哪个目录" + "后文" * 200
    snip = build_snippet(text, tokenize("插件数据目录"), 60)
    assert len(snip.text) <= 60 and len(snip.text) >= 50
    marked = {snip.text[a:b] for a, b in snip.highlights}
    assert {"插件", "数据", "目录"} <= marked


def test_detection_by_script_and_function_words() -> None:
    assert detect_language("这是一个插件的数据目录，使用 docker 部署。" * 3) == "zh"
    assert detect_language("コレクターの設定を確認する方法について説明します。" * 3) == "ja"
    assert detect_language("설정을 변경하려면 다음 명령을 실행하세요." * 3) == "ko"
    german = "Sie können die Abhängigkeiten mit dem Parameter deklarieren und sie werden " * 4
    assert detect_language(german) == "de"
    english = "You can declare the dependencies with the parameter and they will be used " * 4
    assert detect_language(english) is None
    assert language_tag("zh_CN") == "zh-cn" and language_tag("<script>") is None
    from scidx.tokenize import analyzer_language

    assert analyzer_language("de-ch") == "de" and analyzer_language("zh-hans") == "en"


def test_pages_keep_their_language_and_a_query_can_be_limited_to_one(tmp_path: Path) -> None:
    records = [
        Record(id="de", text="Pfadparameter deklarieren", source="de.md", language="de"),
        Record(id="en", text="Declare path parameters", source="en.md", language="en"),
        Record(id="zh", text="声明路径参数", source="zh.md", language="zh"),
    ]
    out = tmp_path / "multi.scidx"
    pack_records(records, out, use_cache=False)
    with scidx.load(out) as idx:
        assert idx.meta["languages"] == ["de", "en", "zh"]
        # German pages were stemmed as German: an inflected query finds them.
        found = idx.search("Pfadparametern", mode="keyword")
        assert [h.source for h in found] == ["de.md"]
        snip = found[0].snippet_parts  # marked by the German analyzer too
        assert [snip.text[a:b] for a, b in snip.highlights] == ["Pfadparameter"]
        hits = idx.search("参数", mode="keyword", language="zh")
        assert [h.source for h in hits] == ["zh.md"]
        assert idx.search("parameters", mode="keyword", language="de") == []


def test_a_hostile_language_tag_is_a_corrupt_index() -> None:
    with pytest.raises(CorruptIndexError, match="meta.language is not a language tag"):
        page_languages({"language": "<b>x</b>"}, None, 1, "bad.scidx")
    with pytest.raises(CorruptIndexError, match="meta.languages"):
        page_languages({"language": "en", "languages": ["en"] * 300}, None, 1, "bad.scidx")
    import numpy as np

    with pytest.raises(CorruptIndexError, match="source.lang"):
        page_languages(
            {"language": "en", "languages": ["en", "de"]}, np.array([5], np.uint8), 1, "b"
        )


def test_a_hostile_language_tag_in_a_file_is_a_clear_error(tmp_path: Path) -> None:
    from support.indexes import rewrite

    out = tmp_path / "a.scidx"
    pack_records([Record(id="a", text="hello", source="a.md", language="de")], out)
    data = out.read_bytes()
    for key, value in (("language", "<script>alert(1)</script>"), ("languages", ["x" * 10**5])):
        bad = rewrite(data, lambda arrays, meta, k=key, v=value: meta.__setitem__(k, v))
        with pytest.raises(CorruptIndexError, match="not a language tag|meta.languages"):
            scidx.load_bytes(bad, source="bad.scidx")


def _node(code: str, data: object) -> object:
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    done = subprocess.run(
        [node, "--input-type=module", "-e", code],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(done.stdout)


def test_js_tokenizer_and_snippets_match_python_on_cjk(shared_dir: Path) -> None:
    texts: list[str] = []
    for path in sorted((shared_dir / "docs-questions").glob("*.jsonl")):
        texts += [json.loads(line)["question"] for line in path.read_text().splitlines()]
    for corpus in ("nonebot2-docs-zh", "opentelemetry-docs-ja"):
        for md in sorted((shared_dir / "corpora" / corpus).rglob("*.md"))[:30]:
            texts.append(md.read_text(encoding="utf-8", errors="replace")[:3000])
    texts += ["설정을 변경하려면", "𠀀𠀁a𠀂 々〆 ｶﾞｷﾞ", "e\u0301 😀中😀文", "中" * 10_000, "a中b_c中"]
    texts += ["\ud800中\udfff文 a\udc00b"]  # lone surrogates: never a word character
    questions = [t for t in texts if any("\u3040" <= ch <= "\u9fff" for ch in t[:40])][:40]
    snips = [(flatten(t)[0], tokenize(q)) for t, q in zip(texts[-60:], questions * 2, strict=False)]
    code = (
        f"import fs from 'fs'; const m = await import({BUNDLE.as_uri()!r});"
        "const d = JSON.parse(fs.readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify({t: d.t.map((x) => m.tokenize(x)),"
        " s: d.s.map(([x, q]) => m.snippet(x, [], q, 80))}));"
    )
    got = _node(code, {"t": texts, "s": snips})
    assert isinstance(got, dict)
    assert got["t"] == [tokenize(t) for t in texts]
    for (text, terms), js in zip(snips, got["s"], strict=True):
        py = build_snippet(text, terms, 80)
        assert (py.text, [list(h) for h in py.highlights]) == (js["text"], js["highlights"])


def test_the_page_speaks_the_index_language() -> None:
    from importlib import resources

    from scidx.index.locales import LOCALES, localize_page, page_locale

    page = resources.files("scidx.web").joinpath("static/index.html").read_text("utf-8")
    assert localize_page(page, "en") == page  # English is the template itself
    assert page_locale({"language": "zh-hans"}) == "zh-hans"
    assert page_locale({"language": "de", "locale": "fr"}) == "fr"
    assert page_locale({"language": "de"}, "ja") == "ja"
    assert page_locale({"language": '"><script>'}) == "en"  # never written into the page
    for locale in ("zh", "ja", "ko", "de", "fr", "es", "pt"):
        out = localize_page(page, locale)
        assert f'<html lang="{locale}">' in out
        assert LOCALES[locale]["placeholder"] in out and "Type to search" not in out
        assert "data-strings=" in out


def test_model_languages_from_the_card_or_the_name(tmp_path: Path) -> None:
    from scidx.embed.languages import covers, model_languages, uncovered_warning

    assert model_languages("all-MiniLM-L6-v2-int8") == ("en",)
    assert model_languages("paraphrase-multilingual-MiniLM-L12-v2") == ("*",)
    assert model_languages("my-own-model") is None
    (tmp_path / "README.md").write_text("---\nlanguage:\n- en\n- de\n---\n# card\n")
    assert model_languages("my-own-model", tmp_path) == ("en", "de")
    assert covers(("en",), "en-us") and not covers(("en",), "zh-hans") and covers(None, "zh")
    warning = uncovered_warning("all-MiniLM-L6-v2", ("en",), ["zh-hans"])
    assert "not zh-hans" in warning and "paraphrase-multilingual-MiniLM-L12-v2" in warning
    assert uncovered_warning("m", ("*",), ["zh"]) == ""


def test_an_english_model_gives_no_vector_only_hits_for_a_chinese_query(tmp_path: Path) -> None:
    from scidx.embed.hashing import HashingEmbedder

    class EnglishOnly(HashingEmbedder):
        def languages(self) -> tuple[str, ...]:
            return ("en",)

    records = [
        Record(id="a", text="插件的数据文件放在数据目录", source="a.md", language="zh"),
        Record(id="b", text="定时任务每天早上运行", source="b.md", language="zh"),
    ]
    out = tmp_path / "zh.scidx"
    result = pack_records(records, out, embedder=EnglishOnly(dimensions=64), use_cache=False)
    assert any("covers en, not zh" in w for w in result.warnings)
    with scidx.load(out) as idx:
        assert idx.meta["modelLanguages"] == ["en"]
        # Only chunks sharing a bigram with the query come back, in every mode.
        for mode in ("vector", "hybrid"):
            assert [h.source for h in idx.search("数据目录", mode=mode)] == ["a.md"]
            assert idx.search("完全无关", mode=mode) == []


def test_js_tokenizes_stemmed_languages_as_python_given_the_same_stemmer(
    tmp_path: Path, shared_dir: Path
) -> None:
    import re

    from scidx.languages import stemmer, stop_words
    from scidx.tokenize import normalize

    texts = [
        json.loads(line)["question"]
        for line in (shared_dir / "docs-questions" / "fastapi-docs-de.jsonl")
        .read_text()
        .splitlines()
    ]
    for md in sorted((shared_dir / "corpora" / "fastapi-docs-de").rglob("*.md"))[:20]:
        texts.append(md.read_text(encoding="utf-8", errors="replace")[:4000])
    texts += ["Übersetzung_der_Pfade Straße 中文Abhängigkeit x", "Größe ÄÖÜ 2 a b"]
    stem = stemmer("de")
    words = {w for t in texts for run in re.findall(r"\w+", normalize(t)) for w in run.split("_")}
    table = {w: stem(w) for w in sorted(words) if w}
    module = tmp_path / "stem.mjs"
    module.write_text(
        "const T = new Map(Object.entries(" + json.dumps(table) + "));\n"
        "export function stemmer(lang) { return (w) => (T.has(w) ? T.get(w) : w); }\n"
        "export function stopWords(lang) { return " + json.dumps(sorted(stop_words("de"))) + "; }\n"
    )
    code = (
        f"import fs from 'fs'; const m = await import({BUNDLE.as_uri()!r});"
        f"m.useLanguage('de', await import({module.as_uri()!r}));"
        "const d = JSON.parse(fs.readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(d.map((x) => m.tokenizeIn(x))));"
    )
    assert _node(code, texts) == [tokenize_as(t, "de") for t in texts]


def test_generator_languages_are_read_in_bounded_time(tmp_path: Path) -> None:
    import time

    from scidx.pack.language import site_languages

    # A long theme block without `language:` once made a regex backtrack for a minute.
    theme = "theme:\n" + "".join(f"  {'x' * 20}{i}: {' ' * 30}value\n" for i in range(400))
    (tmp_path / "mkdocs.yml").write_text(theme + "nav:\n  - a.md\n")
    started = time.perf_counter()
    assert site_languages(None, "mkdocs", tmp_path).generator is None
    assert time.perf_counter() - started < 1.0
    (tmp_path / "mkdocs.yml").write_text("site_name: x\ntheme:\n  name: material\n  language: de\n")
    assert site_languages(None, "mkdocs", tmp_path).generator == "de"
    site = tmp_path / "site"
    (site / "i18n" / "zh-Hans").mkdir(parents=True)
    (site / "docusaurus.config.ts").write_text("i18n: { defaultLocale: 'en', locales: [] }")
    found = site_languages(None, "docusaurus", tmp_path)
    assert found.generator == "en" and found.folders == (("site/i18n/zh-Hans/", "zh-hans"),)
