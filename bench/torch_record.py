"""Record the dimension questions torch's ShapeEnv asks while ``torch.compile(dynamic=True)`` compiles small models.

Seven models, built from configs with tiny sizes and random weights (no downloads): GPT-2, BERT, Llama and
ViT (transformers), ResNet and MobileNetV3 (torchvision), Swin (transformers). While each compiles, two
torch functions are wrapped (here only, in this process) to log what they are asked and what they answer:

- ``torch.fx.experimental.symbolic_shapes._maybe_evaluate_static_worker(expr, symbol_info, unbacked_only,
  size_oblivious)``: the part of ``ShapeEnv._maybe_evaluate_static`` (behind ``evaluate_expr``, guards and
  inductor's ``statically_known_*``) that decides from the value ranges of the names alone. Logged as kind
  ``"static"``: the expression, each name's range, hint and size-likeness, the flags and torch's answer
  (a number or true/false when decided from ranges, None or an expression when not);
- ``torch.utils._sympy.value_ranges.bound_sympy(expr, ranges)``: the bound of an expression under ranges
  (logged as kind ``"bound"``, with the ranges it used, those of the tracing context's ShapeEnv included).

Questions are deduplicated (same kind, expression, ranges and flags) and counted. Expressions are stored in
our own JSON tree format (no text to evaluate when read back): an int is an integer, a string a symbol's
name, a list ``[class name, *args]`` anything else (``["Rational", p, q]``, ``["int_oo"]``, ``["-int_oo"]``,
``["oo"]``, ``["-oo"]``, ``["true"]``, ``["false"]``, ``["Float", "1.5"]``); symbols' assumptions are kept per
model. The corpus goes to ``bench/data/torch_replay/<model>.json.gz``.

Run (bench only; needs torch, torchvision, transformers): ``python -m bench.torch_record [--models gpt2,bert]
[--backend inductor|aot_eager] [--timeout 600]``. Each model compiles in its own process (a timeout stops it
and the next backend, aot_eager, is tried).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "torch_replay"
MODELS = ("gpt2", "bert", "llama", "vit", "resnet", "mobilenet", "swin")
#: the assumptions kept of a symbol (enough to rebuild it as torch made it)
ASSUMPTIONS = ("integer", "positive", "nonnegative", "real", "finite")
MAX_NODES = 20_000  # an expression larger than this is not logged (none was met)


# -- sympy -> JSON tree ----------------------------------------------------------------------------------


def _atom(x: Any) -> Any:
    """The tree of a leaf, or None when ``x`` has arguments to convert."""
    name = type(x).__name__
    if x is True or x is False:
        return ["true" if x else "false"]
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return ["Float", repr(x)]
    if name in ("Integer", "Zero", "One", "NegativeOne", "IntegerConstant") or getattr(x, "is_Integer", False):
        return int(x)
    if getattr(x, "is_Symbol", False):
        return x.name
    special = {
        "IntInfinity": ["int_oo"],
        "NegativeIntInfinity": ["-int_oo"],
        "Infinity": ["oo"],
        "NegativeInfinity": ["-oo"],
        "BooleanTrue": ["true"],
        "BooleanFalse": ["false"],
        "NaN": ["nan"],
    }
    if name in special:
        return special[name]
    if getattr(x, "is_Rational", False):
        return ["Rational", int(x.p), int(x.q)]
    if getattr(x, "is_Float", False):
        return ["Float", repr(float(x))]
    if not getattr(x, "args", ()):
        return ["Atom", name]
    return None


#: torch classes that share their name with a sympy class: stored as "torch.NAME" (the bench rebuilds each)
SHADOWED = ("Identity", "Max", "Min", "Mod")


def tree_name(node: Any) -> str:
    """The class name a tree node stores (``torch.Mod`` for torch's Mod, which is not sympy's)."""
    cls = type(node)
    name = cls.__name__
    return f"torch.{name}" if name in SHADOWED and cls.__module__.startswith("torch") else name


def to_tree(expr: Any, symbols: dict[str, dict[str, bool]]) -> Any:
    """The JSON tree of a sympy expression (iterative); its symbols' assumptions go into ``symbols``."""
    done: dict[Any, Any] = {}
    stack = [expr]
    count = 0
    while stack:
        node = stack[-1]
        if node in done:
            stack.pop()
            continue
        leaf = _atom(node)
        if leaf is not None:
            if getattr(node, "is_Symbol", False) and node.name not in symbols:
                given = getattr(node, "_assumptions_orig", None) or node.assumptions0
                symbols[node.name] = {k: bool(v) for k, v in given.items() if v is not None and k in ASSUMPTIONS}
            done[node] = leaf
            stack.pop()
            continue
        pending = [a for a in node.args if a not in done]
        if pending:
            stack.extend(pending)
            continue
        count += 1
        if count > MAX_NODES:
            raise ValueError("expression too large")
        done[node] = [tree_name(node), *[done[a] for a in node.args]]
        stack.pop()
    return done[expr]


# -- the recorder ----------------------------------------------------------------------------------------


class Recorder:
    """Logs the questions of the wrapped torch functions, deduplicated."""

    def __init__(self) -> None:
        self.symbols: dict[str, dict[str, bool]] = {}
        self.questions: dict[str, dict[str, Any]] = {}
        self.skipped = 0
        self.active = True

    def add(self, record: dict[str, Any]) -> None:
        """Count a question (the first time it is met, keep it)."""
        key = json.dumps(record["q"], sort_keys=True)
        old = self.questions.get(key)
        if old is None:
            self.questions[key] = {**record, "count": 1}
        else:
            old["count"] += 1

    def _range(self, vr: Any) -> Any:
        if vr is None:
            return None
        return [to_tree(vr.lower, self.symbols), to_tree(vr.upper, self.symbols)]

    def static(self, result: Any, expr: Any, symbol_info: Any, unbacked_only: bool, size_oblivious: bool) -> None:
        """Log one call of ``_maybe_evaluate_static_worker``."""
        try:
            infos = []
            for s, vr, val, size_like in symbol_info:
                hint = int(val) if val is not None and getattr(val, "is_Integer", isinstance(val, int)) else None
                infos.append([s.name, self._range(vr), hint, bool(size_like)])
                to_tree(s, self.symbols)
            q = {
                "kind": "static",
                "expr": to_tree(expr, self.symbols),
                "symbols": infos,
                "unbacked_only": bool(unbacked_only),
                "size_oblivious": bool(size_oblivious),
            }
            answer = None if result is None else to_tree(result, self.symbols)
            decided = result is not None and bool(getattr(result, "is_number", False) or result in (True, False))
            if result is not None and type(result).__name__ in ("BooleanTrue", "BooleanFalse"):
                decided = True
            self.add({"q": q, "answer": answer, "decided": decided})
        except Exception:  # a question the tree format cannot hold is counted, not logged
            self.skipped += 1

    def bound(self, result: Any, expr: Any, ranges: dict) -> None:
        """Log one call of ``bound_sympy`` (with the ranges it used)."""
        try:
            import torch

            ranges = dict(ranges or {})
            context = torch._guards.TracingContext.try_get()
            if context and context.fake_mode and context.fake_mode.shape_env:
                ranges = {**context.fake_mode.shape_env.var_to_range, **ranges}
            free = sorted(expr.free_symbols, key=lambda s: s.name)
            q = {
                "kind": "bound",
                "expr": to_tree(expr, self.symbols),
                "ranges": [[s.name, self._range(ranges.get(s))] for s in free],
            }
            for s in free:
                to_tree(s, self.symbols)
            self.add({"q": q, "answer": self._range(result), "decided": True})
        except Exception:  # (as above)
            self.skipped += 1


def install(rec: Recorder) -> None:
    """Wrap the two torch functions (in every module that imported them by name)."""
    import importlib

    for name in ("torch._inductor.codegen.common", "torch._inductor.sizevars"):
        importlib.import_module(name)  # modules that import bound_sympy by name: loaded before it is wrapped
    import torch.fx.experimental.symbolic_shapes as ss
    import torch.utils._sympy.value_ranges as vr

    worker = ss._maybe_evaluate_static_worker
    bound = vr.bound_sympy

    def logged_worker(expr: Any, symbol_info: Any, unbacked_only: bool, size_oblivious: bool) -> Any:
        if not rec.active:
            return worker(expr, symbol_info, unbacked_only, size_oblivious)
        rec.active = False  # the bounds it asks for are part of this question, not questions of their own
        try:
            result = worker(expr, symbol_info, unbacked_only, size_oblivious)
        finally:
            rec.active = True
        if rec.active:
            rec.active = False  # not the calls torch makes while we convert
            try:
                rec.static(result, expr, symbol_info, unbacked_only, size_oblivious)
            finally:
                rec.active = True
        return result

    def logged_bound(expr: Any, ranges: Any = None) -> Any:
        result = bound(expr, ranges)
        if rec.active:
            rec.active = False
            try:
                rec.bound(result, expr, ranges)
            finally:
                rec.active = True
        return result

    ss._maybe_evaluate_static_worker = logged_worker
    for mod in list(sys.modules.values()):
        if getattr(mod, "bound_sympy", None) is bound and getattr(mod, "__name__", "").startswith("torch"):
            mod.bound_sympy = logged_bound


# -- the models ------------------------------------------------------------------------------------------


def build(name: str) -> tuple[Any, tuple]:
    """A tiny model with random weights and an input for it."""
    import torch

    torch.manual_seed(0)
    ids = torch.randint(0, 100, (3, 17))
    image = torch.randn(2, 3, 64, 64)
    if name in ("gpt2", "bert", "llama"):
        import transformers as tf

        if name == "gpt2":
            cfg = tf.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64)
            model = tf.GPT2Model(cfg)
        elif name == "bert":
            cfg = tf.BertConfig(
                num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64, vocab_size=100
            )
            model = tf.BertModel(cfg)
        else:
            cfg = tf.LlamaConfig(
                num_hidden_layers=2,
                hidden_size=32,
                num_attention_heads=2,
                num_key_value_heads=1,
                intermediate_size=64,
                vocab_size=100,
            )
            model = tf.LlamaModel(cfg)
        return model.eval(), (ids,)
    if name == "vit":
        import transformers as tf

        cfg = tf.ViTConfig(
            image_size=64,
            patch_size=8,
            num_hidden_layers=2,
            hidden_size=32,
            num_attention_heads=2,
            intermediate_size=64,
        )
        return tf.ViTModel(cfg).eval(), (image,)
    if name == "swin":
        import transformers as tf

        cfg = tf.SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=4)
        return tf.SwinModel(cfg).eval(), (image,)
    import torchvision

    if name == "resnet":
        from torchvision.models.resnet import BasicBlock, ResNet

        return ResNet(BasicBlock, [1, 1, 1, 1], num_classes=10).eval(), (image,)
    if name == "mobilenet":
        return torchvision.models.mobilenet_v3_small(num_classes=10, width_mult=0.25).eval(), (image,)
    raise ValueError(f"unknown model {name!r}: {', '.join(MODELS)} (NAME+train: forward and backward)")


def record_one(name: str, backend: str) -> None:
    """Compile one model with the recorder installed and write its corpus (``NAME+train``: forward and backward)."""
    import torch

    train = name.endswith("+train")
    base = name.removesuffix("+train")

    torch.set_num_threads(1)
    import torch._inductor.config as ic

    ic.compile_threads = 1
    ic.fx_graph_cache = False
    rec = Recorder()
    model, args = build(base)
    install(rec)
    torch._dynamo.reset()
    start = time.perf_counter()
    if train:

        def step(*inputs: Any) -> Any:
            out = model(*inputs)
            first = out[0] if isinstance(out, tuple) else getattr(out, "last_hidden_state", out)
            return first.float().pow(2).mean()

        model.train()
        torch.compile(step, backend=backend, dynamic=True)(*args).backward()
    else:
        compiled = torch.compile(model, backend=backend, dynamic=True)
        with torch.no_grad():
            compiled(*args)
    seconds = time.perf_counter() - start
    rec.active = False
    out = {
        "model": name,
        "backend": backend,
        "torch": torch.__version__,
        "compile_seconds": round(seconds, 1),
        "skipped": rec.skipped,
        "symbols": rec.symbols,
        "questions": list(rec.questions.values()),
    }
    DATA.mkdir(parents=True, exist_ok=True)
    with gzip.open(DATA / f"{name}.json.gz", "wt", encoding="utf-8") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{name}: {len(rec.questions)} questions ({rec.skipped} skipped), {backend}, {seconds:.0f} s", flush=True)


def write_sample(n: int) -> None:
    """A few questions of every recorded corpus (integer ones, spread over kinds) for the tests: sample.json.gz."""
    import random

    rng = random.Random(0)
    paths = sorted(p for p in DATA.glob("*.json.gz") if p.name != "sample.json.gz")
    per = max(1, n // max(1, len(paths)))
    symbols: dict[str, dict[str, bool]] = {}
    questions = []
    for p in paths:
        with gzip.open(p, "rt", encoding="utf-8") as f:
            corpus = json.load(f)
        model = p.name.removesuffix(".json.gz")
        text = [
            q
            for q in corpus["questions"]
            if "Float" not in json.dumps(q["q"]["expr"])
            and "oo"
            not in json.dumps([s[1] for s in q["q"].get("symbols", q["q"].get("ranges", []))]).replace("int_oo", "")
        ]
        decided = [q for q in text if q["decided"]]
        rest = [q for q in text if not q["decided"]]
        picked = rng.sample(decided, min(len(decided), per * 2 // 3))
        picked += rng.sample(rest, min(len(rest), per - len(picked)))
        for q in picked:
            questions.append({**q, "model": model})
            for name in tree_names(q["q"]["expr"]):
                symbols[name] = corpus["symbols"].get(name, {"integer": True})
    with gzip.open(DATA / "sample.json.gz", "wt", encoding="utf-8") as f:
        json.dump({"symbols": symbols, "questions": questions}, f, separators=(",", ":"))
    print(f"sample: {len(questions)} questions from {len(paths)} corpora")


def tree_names(tree: Any) -> set[str]:
    """The names of the symbols of a corpus tree."""
    out, stack = set(), [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, str):
            out.add(t)
        elif isinstance(t, list) and len(t) > 1 and t[0] not in ("Rational", "Float"):
            stack.extend(t[1:])
    return out


def main() -> None:
    """Record every model (each in its own process, with a timeout and a fallback backend)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--sample", type=int, help="write a sample of N questions (all models) for the tests, and stop")
    a = ap.parse_args()
    if a.sample:
        write_sample(a.sample)
        return
    if a.one:
        record_one(a.one, a.backend)
        return
    env = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for name in a.models.split(","):
        for backend in dict.fromkeys([a.backend, "aot_eager"]):
            cmd = [sys.executable, "-m", "bench.torch_record", "--one", name, "--backend", backend]
            try:
                done = subprocess.run(cmd, timeout=a.timeout, env=env, check=False)
            except subprocess.TimeoutExpired:
                print(f"{name}: {backend} did not finish in {a.timeout:.0f} s", flush=True)
                continue
            if done.returncode == 0:
                break
            print(f"{name}: {backend} failed (exit {done.returncode})", flush=True)


if __name__ == "__main__":
    main()
