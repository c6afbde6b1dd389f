"""Small data sets written to disk for tests: a BEIR folder with its quirks."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["make_beir"]


def make_beir(root: Path, *, crlf: bool = True, header: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    corpus = [
        {"_id": "d1", "title": "Vitamin D", "text": "Vitamin D deficiency weakens bones."},
        {"_id": "d2", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attack."},
        {"_id": "d3", "title": "Sleep", "text": "Short sleep impairs memory consolidation."},
        {"_id": "d4", "title": "", "text": "Exercise improves insulin sensitivity."},
    ]
    queries = [
        {"_id": "1", "text": "vitamin D and bone strength"},
        {"_id": "2", "text": "aspirin heart attack risk"},
        {"_id": "3", "text": "does sleep affect memory"},
        {"_id": "4", "text": "a query with no judgements"},
        {"_id": "5", "text": "insulin"},
    ]
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in corpus), encoding="utf-8"
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8"
    )
    rows = ["query-id\tcorpus-id\tscore"] if header else []
    rows += ["1\td1\t1", "2\td2\t2", "2\td4\t1", "3\td3\t1", "5\td9\t0"]
    nl = "\r\n" if crlf else "\n"
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / "test.tsv").write_bytes((nl.join(rows) + nl).encode())
    return root
