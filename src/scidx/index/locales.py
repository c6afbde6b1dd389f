"""The search page in the index's language: its ``lang`` attribute and UI strings (issue 42).

The page template (``static/index.html``) and ``search.js`` are written in English; a page for
another locale has its English fragments replaced here and the strings ``search.js`` shows
passed in ``data-strings`` (JSON, read with English defaults). Locales: en, zh, ja, ko, de, fr,
es, pt (a locale is matched by its primary subtag; others get English). The locale is the one
asked (``--locale``, the config's ``locale``, ``meta.locale``), else the index's language.

Runtime module: the stdlib only (the server page and the bundle writer share it).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["LOCALES", "localize_page", "page_locale"]

# English fragment of index.html -> key; the page keeps the English text when untranslated.
_PAGE_FRAGMENTS = {
    "label": '<label for="q">Search</label>',
    "placeholder": 'placeholder="Type to search…"',
    "picker": 'aria-label="Index to search"',
    "noscript": "<p>This page needs JavaScript.",
}

_HINT = re.compile(r'<p id="hint" class="hint">.*?</p>', re.S)

#: Per locale: the page's fragments (HTML as in the template) and search.js's strings.
LOCALES: dict[str, dict[str, str]] = {
    "zh": {
        "label": "搜索",
        "placeholder": "输入以搜索…",
        "picker": "要搜索的索引",
        "noscript": "此页面需要 JavaScript。",
        "hint": "输入时即显示结果。<kbd>↓</kbd> 和 <kbd>↑</kbd> 在结果间移动，<kbd>Enter</kbd> "
        "打开，<kbd>Esc</kbd> 返回搜索框，<kbd>/</kbd> 随时跳到搜索框。",
        "all": "所有索引",
        "failed": "搜索失败：",
        "searching": "正在搜索…",
        "none": "没有找到“{q}”的结果。",
        "more": "正在加载更多结果…",
        "count": "“{q}”：{p} 个页面中的 {n} 个结果。",
        "showing": "— 显示的是“{q}”的结果。",
        "grouped": "结果（按页面分组）",
    },
    "ja": {
        "label": "検索",
        "placeholder": "入力して検索…",
        "picker": "検索するインデックス",
        "noscript": "このページには JavaScript が必要です。",
        "hint": "入力すると結果が表示されます。<kbd>↓</kbd> と <kbd>↑</kbd> で移動、"
        "<kbd>Enter</kbd> で開く、<kbd>Esc</kbd> で検索ボックスに戻る、"
        "<kbd>/</kbd> でどこからでも検索ボックスへ。",
        "all": "すべてのインデックス",
        "failed": "検索に失敗しました: ",
        "searching": "検索中…",
        "none": "「{q}」に一致する結果はありません。",
        "more": "さらに結果を読み込み中…",
        "count": "「{q}」: {p} ページで {n} 件の結果。",
        "showing": "— 「{q}」の結果を表示しています。",
        "grouped": "ページごとの結果",
    },
    "ko": {
        "label": "검색",
        "placeholder": "검색어를 입력하세요…",
        "picker": "검색할 색인",
        "noscript": "이 페이지는 JavaScript가 필요합니다.",
        "hint": "입력하면 결과가 나타납니다. <kbd>↓</kbd>와 <kbd>↑</kbd>로 이동, "
        "<kbd>Enter</kbd>로 열기, <kbd>Esc</kbd>로 검색창으로 돌아가기, "
        "<kbd>/</kbd>로 어디서나 검색창으로 이동.",
        "all": "모든 색인",
        "failed": "검색 실패: ",
        "searching": "검색 중…",
        "none": "“{q}”에 대한 결과가 없습니다.",
        "more": "결과를 더 불러오는 중…",
        "count": "“{q}”: {p}개 페이지에서 결과 {n}개.",
        "showing": "— “{q}”에 대한 결과를 표시합니다.",
        "grouped": "페이지별 결과",
    },
    "de": {
        "label": "Suche",
        "placeholder": "Suchbegriff eingeben…",
        "picker": "Zu durchsuchender Index",
        "noscript": "Diese Seite benötigt JavaScript.",
        "hint": "Ergebnisse erscheinen beim Tippen. <kbd>↓</kbd> und <kbd>↑</kbd> wechseln "
        "zwischen ihnen, <kbd>Enter</kbd> öffnet eines, <kbd>Esc</kbd> führt zum Suchfeld zurück, "
        "<kbd>/</kbd> springt von überall dorthin.",
        "all": "Alle Indizes",
        "failed": "Suche fehlgeschlagen: ",
        "searching": "Suche läuft…",
        "none": "Keine Ergebnisse für „{q}“.",
        "more": "Weitere Ergebnisse werden geladen…",
        "count": "{n} Ergebnis(se) auf {p} Seite(n) für „{q}“.",
        "showing": "— Ergebnisse für „{q}“.",
        "grouped": "Ergebnisse, nach Seite gruppiert",
    },
    "fr": {
        "label": "Rechercher",
        "placeholder": "Tapez pour rechercher…",
        "picker": "Index à parcourir",
        "noscript": "Cette page nécessite JavaScript.",
        "hint": "Les résultats s’affichent pendant la saisie. <kbd>↓</kbd> et <kbd>↑</kbd> les "
        "parcourent, <kbd>Entrée</kbd> en ouvre un, <kbd>Échap</kbd> revient au champ de "
        "recherche, <kbd>/</kbd> y mène depuis n’importe où.",
        "all": "Tous les index",
        "failed": "Échec de la recherche : ",
        "searching": "Recherche…",
        "none": "Aucun résultat pour « {q} ».",
        "more": "Chargement d’autres résultats…",
        "count": "{n} résultat(s) sur {p} page(s) pour « {q} ».",
        "showing": "— résultats pour « {q} ».",
        "grouped": "Résultats, groupés par page",
    },
    "es": {
        "label": "Buscar",
        "placeholder": "Escribe para buscar…",
        "picker": "Índice en el que buscar",
        "noscript": "Esta página necesita JavaScript.",
        "hint": "Los resultados aparecen mientras escribes. <kbd>↓</kbd> y <kbd>↑</kbd> los "
        "recorren, <kbd>Intro</kbd> abre uno, <kbd>Esc</kbd> vuelve al cuadro de búsqueda, "
        "<kbd>/</kbd> salta a él desde cualquier sitio.",
        "all": "Todos los índices",
        "failed": "La búsqueda falló: ",
        "searching": "Buscando…",
        "none": "No hay resultados para «{q}».",
        "more": "Cargando más resultados…",
        "count": "{n} resultado(s) en {p} página(s) para «{q}».",
        "showing": "— mostrando resultados de «{q}».",
        "grouped": "Resultados, agrupados por página",
    },
    "pt": {
        "label": "Pesquisar",
        "placeholder": "Digite para pesquisar…",
        "picker": "Índice a pesquisar",
        "noscript": "Esta página precisa de JavaScript.",
        "hint": "Os resultados aparecem enquanto você digita. <kbd>↓</kbd> e <kbd>↑</kbd> "
        "percorrem-nos, <kbd>Enter</kbd> abre um, <kbd>Esc</kbd> volta à caixa de pesquisa, "
        "<kbd>/</kbd> leva a ela de qualquer lugar.",
        "all": "Todos os índices",
        "failed": "A pesquisa falhou: ",
        "searching": "Pesquisando…",
        "none": "Nenhum resultado para “{q}”.",
        "more": "Carregando mais resultados…",
        "count": "{n} resultado(s) em {p} página(s) para “{q}”.",
        "showing": "— mostrando resultados para “{q}”.",
        "grouped": "Resultados, agrupados por página",
    },
}

_JS_KEYS = ("all", "failed", "searching", "none", "more", "count", "grouped")
_TAG = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,3}")


def page_locale(meta: Mapping[str, Any], asked: str | None = None) -> str:
    """The page's language tag: ``asked``, else ``meta.locale``, else ``meta.language``, else en.

    A value that is not a language tag is skipped (the tag is written into the page).
    """
    for value in (asked, meta.get("locale"), meta.get("language")):
        if isinstance(value, str):
            tag = value.strip().replace("_", "-").lower()
            if len(tag) <= 35 and _TAG.fullmatch(tag):
                return tag
    return "en"


def localize_page(page: str, locale: str) -> str:
    """``page`` (the rendered template) with ``lang`` set and its UI text in ``locale``."""
    page = page.replace('<html lang="en">', f'<html lang="{html.escape(locale, quote=True)}">', 1)
    strings = LOCALES.get(locale.split("-", 1)[0])
    if strings is None:
        return page
    for key, fragment in _PAGE_FRAGMENTS.items():
        english = {
            "label": "Search</label>",
            "placeholder": "Type to search…",
            "picker": "Index to search",
            "noscript": "This page needs JavaScript.",
        }[key]
        page = page.replace(fragment, fragment.replace(english, _html_text(key, strings)), 1)
    page = _HINT.sub(lambda _: f'<p id="hint" class="hint">{strings["hint"]}</p>', page, count=1)
    js = json.dumps({k: strings[k] for k in _JS_KEYS}, ensure_ascii=False)
    return page.replace(
        '<main id="app"', f'<main id="app" data-strings="{html.escape(js, quote=True)}"', 1
    )


def _html_text(key: str, strings: Mapping[str, str]) -> str:
    text = html.escape(strings[key], quote=True)
    return text + "</label>" if key == "label" else text
