"""TEMPORARY shim of the ``stem`` engineer's runtime language module (issue 42, deliverable 3).

Drop this file when their ``scidx.languages`` lands: it only stands in for the agreed API
(``STEMMED_LANGUAGES``, ``stemmer(lang)``, ``stop_words(lang)``) so the language wiring can be
built and measured. It borrows ``snowballstemmer`` when installed and stems nothing otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

__all__ = ["STEMMED_LANGUAGES", "stemmer", "stop_words"]

STEMMED_LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "pt", "it", "nl")

_NAMES = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
}

_STOP = {
    "de": """aber alle allem allen aller alles als also am an ander andere anderem anderen anderer
    anderes anders auch auf aus bei bin bis bist da damit dann das dass dasselbe dazu daß dein
    deine deinem deinen deiner deines dem demselben den denn denselben der derer derselbe
    derselben des desselben dessen dich die dies diese dieselbe dieselben diesem diesen dieser
    dieses dir doch dort du durch ein eine einem einen einer eines einig einige einigem einigen
    einiger einiges einmal er es etwas euch euer eure eurem euren eurer eures für gegen gewesen
    hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer
    ihres im in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt
    kann kein keine keinem keinen keiner keines können könnte machen man manche manchem manchen
    mancher manches mein meine meinem meinen meiner meines mich mir mit muss musste nach nicht
    nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seines selbst sich sie
    sind so solche solchem solchen solcher solches soll sollte sondern sonst um und uns unser
    unsere unserem unseren unserer unseres unter viel vom von vor war waren warst was weg weil
    weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird
    wirst wo wollen wollte würde würden zu zum zur zwar zwischen über""",
    "fr": """au aux avec ce ces dans de des du elle en et eux il je la le leur lui ma mais me même
    mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi
    ton tu un une vos votre vous est sont""",
    "es": """de la que el en y a los del se las por un para con no una su al lo como más pero sus
    le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien desde
    todo nos durante todos uno les ni contra otros ese eso ante ellos e esto mí antes algunos qué
    unos yo otro otras otra él es son""",
    "pt": """de a o que e do da em um para com não uma os no se na por mais as dos como mas ao ele
    das à seu sua ou quando muito nos já eu também só pelo pela até isso ela entre depois sem
    mesmo aos seus quem nas me esse eles você essa num nem suas meu às minha numa pelos elas
    qual nós lhe deles essas esses pelas este dele é são""",
    "it": """ad al allo ai agli all agl alla alle con col coi da dal dallo dai dagli dall dagl dalla
    dalle di del dello dei degli dell degl della delle in nel nello nei negli nell negl nella
    nelle su sul sullo sui sugli sull sugl sulla sulle per tra contro io tu lui lei noi voi loro
    il lo la i gli le un uno una ma ed se perché anche come dov dove che chi cui non più quale
    quanto quanti quanta quante quello quelli quella quelle questo questi questa queste si è e o""",
    "nl": """de en van ik te dat die in een hij het niet zijn is was op aan met als voor had er
    maar om hem dan zou of wat mijn men dit zo door over ze zich bij ook tot je mij uit der daar
    haar naar heb hoe heeft hebben deze u want nog zal me zij nu ge geen omdat iets worden toch
    al waren veel meer doen toen moet ben zonder kan hun dus alles onder ja eens hier wie werd
    altijd doch wordt wezen kunnen ons zelf tegen na reeds wil kon niets uw iemand geweest
    andere""",
}


def stemmer(lang: str) -> Callable[[str], str]:
    """The language's stemmer (identity when ``snowballstemmer`` is not installed)."""
    try:
        module = importlib.import_module("snowballstemmer")
    except ImportError:
        return str
    return module.stemmer(_NAMES[lang]).stemWord  # type: ignore[no-any-return]


def stop_words(lang: str) -> frozenset[str]:
    """The language's stop words."""
    return frozenset(_STOP.get(lang, "").split())
