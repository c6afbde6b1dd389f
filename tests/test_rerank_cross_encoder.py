"""The ``cross-encoder`` reranker on a real ONNX cross-encoder built here, against numpy.

No published cross-encoder weights are available offline, so the test writes a small network of the
same shape (token + segment embeddings, masked mean, tanh, one logit: tests/support/onnx_models.py)
in the sentence-transformers ``CrossEncoder`` folder layout, with a real ``tokenizer.json`` that
encodes pairs ``[CLS] query [SEP] passage [SEP]``. Scores must equal a numpy computation of the same
network on a tokenization done independently here; the bad-model cases are those the ``local``
embedding provider covers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import scidx
from scidx.errors import ConfigError, RerankError
from scidx.index.params import SearchParams
from scidx.index.rerank import passage
from scidx.rerank.cross_encoder import CrossEncoderReranker
from scidx.rerank.registry import load_reranker

sys.path.insert(0, str(Path(__file__).parent))
from support.onnx_models import cross_encoder_model, nan_model  # noqa: E402

WORDS = "cache settings entry the a how do i configure timeout zebra retry server disk".split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
VOCAB = {w: i for i, w in enumerate([*SPECIAL, *WORDS])}
DIMS = 6
MAX_TOKENS = 16

RNG = np.random.default_rng(26)
WORD = RNG.normal(size=(len(VOCAB), DIMS))
TYPES = RNG.normal(size=(2, DIMS))
W = RNG.normal(size=(DIMS, 1))
B = np.array([0.25])


def _tokenizer_json(vocab: dict[str, int]) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return str(tok.to_str())


def make_model(
    folder: Path,
    *,
    activation: str | None = "torch.nn.modules.activation.Sigmoid",
    onnx: bytes | None = None,
    config: dict[str, Any] | None = None,
    vocab: dict[str, int] | None = None,
) -> Path:
    """A CrossEncoder folder: onnx/model.onnx, tokenizer.json, config.json."""
    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    model = onnx or cross_encoder_model(WORD.tolist(), TYPES.tolist(), W.tolist(), B.tolist())
    (folder / "onnx" / "model.onnx").write_bytes(model)
    (folder / "tokenizer.json").write_text(_tokenizer_json(vocab or VOCAB), encoding="utf-8")
    cfg: dict[str, Any] = {
        "architectures": ["BertForSequenceClassification"],
        "vocab_size": len(VOCAB),
        "max_position_embeddings": MAX_TOKENS,
        "id2label": {"0": "LABEL_0"},
    }
    if activation is not None:
        cfg["sentence_transformers"] = {"activation_fn": activation}
    cfg.update(config or {})
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return folder


def reference(query: str, text: str, activation: str = "sigmoid") -> float:
    """The network in numpy, on a tokenization written out by hand (longest-first truncation
    only ever cuts the passage here: the queries are short)."""
    q = [VOCAB.get(w, 1) for w in query.split()]
    p = [VOCAB.get(w, 1) for w in text.split()]
    p = p[: MAX_TOKENS - 3 - len(q)]
    ids = [VOCAB["[CLS]"], *q, VOCAB["[SEP]"], *p, VOCAB["[SEP]"]]
    segments = [0] * (len(q) + 2) + [1] * (len(p) + 1)
    states = WORD[ids] + TYPES[segments]
    logit = float((np.tanh(states.mean(axis=0)) @ W + B)[0])
    if activation == "sigmoid":
        return 1.0 / (1.0 + np.exp(-logit))
    return logit


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_model(tmp_path_factory.mktemp("ce") / "tiny-cross-encoder")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> scidx.Index:
    records = [
        {"id": f"d{i}", "title": "", "text": text}
        for i, text in enumerate(
            [
                "cache settings entry the disk cache",
                "how do i configure the timeout",
                "retry the server a zebra",
                "the cache entry timeout zebra retry server disk settings cache cache cache",
                "configure the disk",
            ]
        )
    ]
    path = tmp_path_factory.mktemp("ce-index") / "ce.scidx"
    scidx.pack_records(records, path, dimensions=32)
    return scidx.load(path)


def test_scores_equal_the_numpy_network(model: Path) -> None:
    reranker = CrossEncoderReranker(model)
    assert not reranker.loaded  # lazy: nothing runs until the first rerank
    pairs = [
        ("configure cache", "cache settings entry the disk cache"),
        ("configure cache", "retry the server"),
        ("zebra", "how do i configure the timeout"),
        ("timeout", "a"),
    ]
    got = reranker.score_pairs(pairs)
    assert reranker.loaded
    want = [reference(q, p) for q, p in pairs]
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (got, want)
    # Batching (and the padding it adds) does not change a score.
    one = CrossEncoderReranker(model, batch_size=1, threads=1).score_pairs(pairs)
    assert np.allclose(one, got, rtol=1e-6, atol=1e-7)


def test_pair_encoding_and_truncation_to_the_models_length(model: Path) -> None:
    reranker = CrossEncoderReranker(model)
    feed = reranker.encode([("configure cache", "retry the server")])
    assert feed["input_ids"].tolist() == [
        [VOCAB[w] for w in "[CLS] configure cache [SEP] retry the server [SEP]".split()]
    ]
    assert feed["token_type_ids"].tolist() == [[0, 0, 0, 0, 1, 1, 1, 1]]
    long = " ".join(["cache", "zebra", "retry"] * 20)
    feed = reranker.encode([("timeout", long)])
    assert feed["input_ids"].shape == (1, MAX_TOKENS)  # the model's own limit
    (score,) = reranker.score_pairs([("timeout", long)])
    assert score == pytest.approx(reference("timeout", long), rel=1e-5)


def test_activation_comes_from_the_model(tmp_path: Path) -> None:
    for activation, name in [
        ("torch.nn.modules.linear.Identity", "identity"),
        (None, "sigmoid"),  # CrossEncoder's default for a one-label model
    ]:
        folder = make_model(tmp_path / name / "m", activation=activation)
        reranker = CrossEncoderReranker(folder)
        assert reranker.activation == name
        (score,) = reranker.score_pairs([("cache", "disk cache")])
        assert score == pytest.approx(reference("cache", "disk cache", name), rel=1e-5)
    old = make_model(
        tmp_path / "old" / "m",
        activation=None,
        config={"sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"},
    )
    assert CrossEncoderReranker(old).activation == "identity"


def test_search_with_the_registry_reranker(model: Path, index: scidx.Index) -> None:
    reranker = load_reranker("cross-encoder", str(model), threads="1")
    hits = index.search_with(
        "configure cache", SearchParams(k=3, group=None, rerank=reranker, rerank_top=5)
    )
    candidates = index.search_with("configure cache", SearchParams(k=5, group=None))
    expected = sorted(
        ((reference("configure cache", passage(h)), h.id) for h in candidates),
        key=lambda t: -t[0],
    )[:3]
    assert [h.id for h in hits] == [i for _, i in expected]
    assert [h.score for h in hits] == pytest.approx([s for s, _ in expected], rel=1e-5)
    assert reranker.stamp()["provider"] == "cross-encoder"
    assert str(reranker.stamp()["model"]).startswith("tiny-cross-encoder@")


def test_identity_follows_the_weights(model: Path, tmp_path: Path) -> None:
    other = make_model(
        tmp_path / "tiny-cross-encoder",
        onnx=cross_encoder_model(WORD.tolist(), TYPES.tolist(), (-W).tolist(), B.tolist()),
    )
    a, b = CrossEncoderReranker(model), CrossEncoderReranker(other)
    assert a.stamp()["model"] != b.stamp()["model"]
    assert CrossEncoderReranker(model).stamp() == a.stamp()


def test_loading_imports_nothing_until_the_first_rerank(model: Path) -> None:
    code = (
        "import sys\n"
        "from scidx.rerank.registry import load_reranker\n"
        f"r = load_reranker('cross-encoder', {str(model)!r})\n"
        "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules\n"
        "print(r.stamp()['model'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# -- bad models: the cases the local embedding provider covers ---------------------------------


def _rerank_fails(folder: Path, *needles: str) -> str:
    reranker = CrossEncoderReranker(folder)
    with pytest.raises(RerankError) as info:
        reranker.score_pairs([("cache", "disk cache")])
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
    assert not reranker.loaded
    return message


def test_folder_without_model_onnx(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m")
    (folder / "onnx" / "model.onnx").unlink()
    with pytest.raises(ConfigError, match="no model.onnx in this model folder"):
        CrossEncoderReranker(folder)


def test_folder_without_tokenizer(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match="no tokenizer.json in this model folder"):
        CrossEncoderReranker(folder)


def test_missing_model_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="model folder not found"):
        load_reranker("cross-encoder", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="needs a model"):
        load_reranker("cross-encoder")


def test_corrupt_onnx(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m", onnx=b"\x08\x01garbage, not a model")
    _rerank_fails(folder, "ONNX Runtime cannot load this model", "export or copy it again")


def test_corrupt_tokenizer(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m")
    (folder / "tokenizer.json").write_text("{not json", encoding="utf-8")
    _rerank_fails(folder, "not a usable tokenizer.json")


def test_tokenizer_of_another_model(tmp_path: Path) -> None:
    bigger = {**VOCAB, **{f"w{i}": len(VOCAB) + i for i in range(50)}}
    folder = make_model(tmp_path / "m", vocab=bigger, config={"vocab_size": len(bigger)})
    _rerank_fails(folder, "tokenizer's largest token id is rejected by the model")
    folder = make_model(tmp_path / "n", vocab=bigger)  # config.json says the smaller vocab
    _rerank_fails(folder, "the tokenizer belongs to another model")


def test_model_with_several_labels_is_refused(tmp_path: Path) -> None:
    three = cross_encoder_model(
        WORD.tolist(), TYPES.tolist(), np.ones((DIMS, 3)).tolist(), [0.0, 0.0, 0.0]
    )
    folder = make_model(tmp_path / "m", onnx=three)
    _rerank_fails(folder, "has shape [1, 3]", "one relevance logit per pair")


def test_unexpected_inputs_are_refused(tmp_path: Path) -> None:
    odd = cross_encoder_model(
        WORD.tolist(), TYPES.tolist(), W.tolist(), B.tolist(), inputs=("ids", "mask", "seg")
    )
    folder = make_model(tmp_path / "m", onnx=odd)
    _rerank_fails(folder, "the model's inputs are ['ids', 'mask', 'seg']")


def test_nan_outputs(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m", onnx=nan_model(1))
    # nan_model returns (batch, sequence, 1) token states: refused by shape or as NaN.
    _rerank_fails(folder, str(folder / "onnx" / "model.onnx"))
    nan_weights = cross_encoder_model(WORD.tolist(), TYPES.tolist(), W.tolist(), [float("nan")])
    folder = make_model(tmp_path / "n", onnx=nan_weights)
    _rerank_fails(folder, "NaN or infinite scores", "exported wrongly")


def test_bad_settings_are_config_errors(model: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="threads must be a positive integer"):
        CrossEncoderReranker(model, threads=0)
    with pytest.raises(ConfigError, match="max_tokens 64 is above the model's limit of 16"):
        CrossEncoderReranker(model, max_tokens=64)
    with pytest.raises(ConfigError, match="threads must be an integer, got 'two'"):
        load_reranker("cross-encoder", str(model), threads="two")
    odd = make_model(tmp_path / "m", activation="torch.nn.modules.activation.Softmax")
    with pytest.raises(ConfigError, match="activation .*Softmax.* is not supported"):
        CrossEncoderReranker(odd)


def test_cli_exit_codes(model: Path, tmp_path: Path, index: scidx.Index) -> None:
    broken = make_model(tmp_path / "m", onnx=b"junk")
    base = [sys.executable, "-m", "scidx", "search", str(index.source), "cache", "--json"]
    ok = subprocess.run(
        [*base, "--rerank", "cross-encoder", "--rerank-model", str(model)],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)
    for model_dir, code, needle in [
        (broken, 2, "ONNX Runtime cannot load this model"),
        (tmp_path / "none", 1, "model folder not found"),
    ]:
        out = subprocess.run(
            [*base, "--rerank", "cross-encoder", "--rerank-model", str(model_dir)],
            capture_output=True,
            text=True,
        )
        assert out.returncode == code, out.stderr
        assert needle in out.stderr and "Traceback" not in out.stderr
