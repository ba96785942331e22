"""The real-model ONNX corpus of ``bench_onnx_models``: exports, and their true shapes from onnxruntime runs.

Models are built from transformers/torchvision configs with tiny sizes and random weights (nothing
is downloaded): GPT-2, BERT, Llama, T5 (full encoder-decoder forward), ViT, Swin (padded and
aligned sizes), ResNet-18, MobileNetV3-small, LR-ASPP, and beyond the issue's list DeepLabV3 and a
Faster R-CNN (one image; data-dependent box counts through NonZero, TopK and NMS, control flow).
Each is exported by both torch exporters: the TorchScript one
(``dynamo=False``, ``dynamic_axes``) and the dynamo one (``dynamo=True``, ``dynamic_shapes``), with
batch, sequence and image sizes dynamic. The ``.onnx`` models the onnx package ships under
``backend/test/data/light`` join them, their batch and spatial input dims made symbolic where the
model still runs at other sizes.

Ground truth: onnxruntime runs each model (graph optimisations off) with every node output added
as a graph output, at three input sizes, and records every value's shape at each size. An export or
a run that fails is reported and skipped, never fatal. Everything is cached under
``bench/data/onnx_models/`` (``<key>.onnx`` and ``<key>.json``; failures in ``failed.json``).

Run: ``python -m bench.onnx_corpus [--rebuild] [--models gpt2,resnet18,...]``.
"""

from __future__ import annotations

import argparse
import json
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.onnx_corpus_truth import CACHE, VOCAB, Input, record

FAILED = CACHE / "failed.json"
EXPORTERS = ("ts", "dynamo")
TEXT_SIZES = [{"batch": 1, "seq": 5, "dseq": 3}, {"batch": 2, "seq": 8, "dseq": 4}, {"batch": 3, "seq": 13, "dseq": 6}]
TEXT_EXAMPLE = {"batch": 2, "seq": 7, "dseq": 5}  # export hints distinct from each other and the model's sizes
IMAGE_SIZES = [{"batch": 1, "H": 64, "W": 64}, {"batch": 2, "H": 96, "W": 80}, {"batch": 3, "H": 128, "W": 112}]
IMAGE_EXAMPLE = {"batch": 2, "H": 72, "W": 88}
VIT_SIZES = [{"batch": 1, "H": 32, "W": 40}, {"batch": 2, "H": 48, "W": 56}, {"batch": 3, "H": 64, "W": 32}]
# Swin pads to its window (4) after the patch embedding (4) and the merging (2); both exporters fix each padding
# branch at the example's sizes (torch's guards are dropped), so the truth sizes take the example's branches:
# "swin" pads at every stage (H/4 odd, W/4 = 3 mod 4), "swin_aligned" never (multiples of 32)
SWIN_EXAMPLE = {"batch": 2, "H": 76, "W": 92}
SWIN_SIZES = [{"batch": 1, "H": 76, "W": 92}, {"batch": 2, "H": 84, "W": 60}, {"batch": 3, "H": 100, "W": 124}]
SWIN_ALIGNED_EXAMPLE = {"batch": 2, "H": 96, "W": 64}
SWIN_ALIGNED_SIZES = [{"batch": 1, "H": 64, "W": 128}, {"batch": 2, "H": 96, "W": 64}, {"batch": 3, "H": 128, "W": 96}]
LIGHT_SIZES = [{"N": 1, "H": 224, "W": 224}, {"N": 2, "H": 192, "W": 256}, {"N": 3, "H": 256, "W": 160}]
DETECTION_SIZES = [{"H": 200, "W": 240}, {"H": 240, "W": 200}, {"H": 320, "W": 280}]
DETECTION_EXAMPLE = {"H": 224, "W": 256}


@dataclass
class TorchSpec:
    """A torch model to export: how to build it, its inputs, the sizes of the three truth runs."""

    name: str
    family: str
    build: Callable[[], Any]
    inputs: list[Input]
    sizes: list[dict[str, int]]
    example: dict[str, int]
    fallback: list[dict[str, int]] | None = None  # sizes to use when an export does not run at ``sizes``


def _text_inputs(*names: str) -> list[Input]:
    return [
        (n, "ids" if n.endswith("input_ids") else "mask", ("batch", "dseq" if n.startswith("decoder") else "seq"))
        for n in names
    ]


def _image_input(channels: int = 3) -> list[Input]:
    return [("pixel_values", "float", ("batch", channels, "H", "W"))]


def _wrap(model: Any, names: list[str], call: Callable[..., Any]) -> Any:
    """A module taking the inputs positionally and returning one tensor (exporters want plain tensors out)."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model.eval()

    # torch.export wants named parameters, not *args: one forward per arity
    def forward1(self: Any, a: Any) -> Any:
        return call(self.inner, dict(zip(names, (a,), strict=True)))

    def forward2(self: Any, a: Any, b: Any) -> Any:
        return call(self.inner, dict(zip(names, (a, b), strict=True)))

    def forward3(self: Any, a: Any, b: Any, c: Any) -> Any:
        return call(self.inner, dict(zip(names, (a, b, c), strict=True)))

    Wrapped.forward = (forward1, forward2, forward3)[len(names) - 1]
    return Wrapped().eval()


def _hf(config_cls: str, model_cls: str, names: list[str], extra: dict[str, Any] | None = None, **cfg: Any) -> Callable:
    attention = cfg.pop("attention", None)

    def build() -> Any:
        import torch
        import transformers

        torch.manual_seed(0)
        config = getattr(transformers, config_cls)(**cfg)
        if (
            attention is not None
        ):  # the dynamo exporter fails on T5's and Swin's default attention (a view of a transpose)
            config._attn_implementation = attention
        model = getattr(transformers, model_cls)(config)
        kwargs = dict(extra or {})
        return _wrap(model, names, lambda m, feed: m(**feed, **kwargs, return_dict=False)[0])

    return build


def _tv(fn: str, module: str = "models", pick: str | None = None, **kw: Any) -> Callable:
    def build() -> Any:
        import importlib

        import torch

        torch.manual_seed(0)
        model = getattr(importlib.import_module(f"torchvision.{module}"), fn)(**kw)
        return _wrap(
            model,
            ["pixel_values"],
            lambda m, feed: m(feed["pixel_values"]) if pick is None else m(feed["pixel_values"])[pick],
        )

    return build


def _detector(fn: str, **kw: Any) -> Callable:
    """A torchvision detection model on one image (batch 1): its boxes (data-dependent count: NonZero, TopK, NMS)."""

    def build() -> Any:
        import torch
        import torchvision

        torch.manual_seed(0)
        model = getattr(torchvision.models.detection, fn)(**kw)
        return _wrap(model, ["pixel_values"], lambda m, feed: m(list(feed["pixel_values"]))[0]["boxes"])

    return build


TEXT = {"vocab_size": VOCAB, "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 0}
GPT2 = {"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 64, "use_cache": False, **TEXT}
BERT = {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 32, "intermediate_size": 64, **TEXT}
LLAMA = {**BERT, "num_attention_heads": 4, "num_key_value_heads": 2, "use_cache": False}
T5 = {"num_layers": 2, "num_decoder_layers": 2, "num_heads": 2, "d_model": 32, "d_kv": 16, "d_ff": 64,
      "relative_attention_num_buckets": 8, "use_cache": False, "decoder_start_token_id": 0, "attention": "eager",
      **TEXT}  # fmt: skip
VIT = {"image_size": 32, "patch_size": 8, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
       "intermediate_size": 64}  # fmt: skip
SWIN = {
    "image_size": 64,
    "patch_size": 4,
    "embed_dim": 16,
    "depths": [1, 1],
    "num_heads": [1, 2],
    "window_size": 4,
    "attention": "eager",
}
IDS_MASK = ["input_ids", "attention_mask"]
NO_CACHE = {"use_cache": False}
SPECS = [
    TorchSpec("gpt2", "transformers", _hf("GPT2Config", "GPT2LMHeadModel", IDS_MASK, NO_CACHE, **GPT2),
              _text_inputs(*IDS_MASK), TEXT_SIZES, TEXT_EXAMPLE),
    TorchSpec("bert", "transformers", _hf("BertConfig", "BertModel", [*IDS_MASK, "token_type_ids"], None, **BERT),
              _text_inputs(*IDS_MASK, "token_type_ids"), TEXT_SIZES, TEXT_EXAMPLE),
    TorchSpec("llama", "transformers", _hf("LlamaConfig", "LlamaForCausalLM", IDS_MASK, NO_CACHE, **LLAMA),
              _text_inputs(*IDS_MASK), TEXT_SIZES, TEXT_EXAMPLE),
    TorchSpec("t5", "transformers", _hf("T5Config", "T5ForConditionalGeneration", [*IDS_MASK, "decoder_input_ids"],
              NO_CACHE, **T5), _text_inputs(*IDS_MASK, "decoder_input_ids"), TEXT_SIZES, TEXT_EXAMPLE),
    TorchSpec("vit", "transformers", _hf("ViTConfig", "ViTModel", ["pixel_values"], {"interpolate_pos_encoding": True},
              **VIT), _image_input(), VIT_SIZES, IMAGE_EXAMPLE),
    TorchSpec("swin", "transformers", _hf("SwinConfig", "SwinModel", ["pixel_values"], None, **SWIN),
              _image_input(), SWIN_SIZES, SWIN_EXAMPLE),
    TorchSpec("swin_aligned", "transformers", _hf("SwinConfig", "SwinModel", ["pixel_values"], None, **SWIN),
              _image_input(), SWIN_ALIGNED_SIZES, SWIN_ALIGNED_EXAMPLE),
    TorchSpec("resnet18", "torchvision", _tv("resnet18", weights=None, num_classes=10), _image_input(),
              IMAGE_SIZES, IMAGE_EXAMPLE),
    TorchSpec("mobilenet_v3_small", "torchvision", _tv("mobilenet_v3_small", weights=None, num_classes=10),
              _image_input(), IMAGE_SIZES, IMAGE_EXAMPLE),
    TorchSpec("deeplabv3", "torchvision", _tv("deeplabv3_mobilenet_v3_large", "models.segmentation", "out",
              weights=None, weights_backbone=None, num_classes=3, aux_loss=False), _image_input(), IMAGE_SIZES,
              IMAGE_EXAMPLE),
    TorchSpec("fasterrcnn", "torchvision", _detector("fasterrcnn_mobilenet_v3_large_320_fpn", weights=None,
              weights_backbone=None, num_classes=3), [("pixel_values", "float", (1, 3, "H", "W"))],
              DETECTION_SIZES, DETECTION_EXAMPLE),
    TorchSpec("lraspp", "torchvision", _tv("lraspp_mobilenet_v3_large", "models.segmentation", "out", weights=None,
              weights_backbone=None, num_classes=3), _image_input(), IMAGE_SIZES, IMAGE_EXAMPLE),
]  # fmt: skip
SPECS_BY_NAME = {s.name: s for s in SPECS}


def light_dir() -> Path:
    """The directory of the onnx package's light models."""
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def light_names() -> list[str]:
    """Names of the onnx package's light models (``light_resnet50``, ...)."""
    return sorted(p.stem for p in light_dir().glob("*.onnx"))


def model_names() -> list[str]:
    """Every model name of the corpus (an exported model has one entry per exporter)."""
    return [s.name for s in SPECS] + light_names()


def keys_for(name: str) -> list[str]:
    """Cache keys of a model name (``gpt2`` -> ``gpt2-ts``, ``gpt2-dynamo``) or of one key (``gpt2-ts``)."""
    if name.startswith("light_") and name in light_names():
        return [name]
    if name in SPECS_BY_NAME:
        return [f"{name}-{e}" for e in EXPORTERS]
    model, _, exporter = name.rpartition("-")
    if model in SPECS_BY_NAME and exporter in EXPORTERS:
        return [name]
    raise ValueError(f"no corpus model or entry {name!r}; the models: {', '.join(model_names())}")


# -- building ------------------------------------------------------------------------------------------------


def export(spec: TorchSpec, exporter: str, path: Path) -> None:
    """Export ``spec``'s model with one torch exporter to ``path`` (dynamic dims as the spec names them)."""
    import onnx
    import torch

    module = spec.build()
    example = make_feed_example(spec)
    names = [n for n, _, _ in spec.inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "ts":
            axes = {n: {i: a for i, a in enumerate(ax) if isinstance(a, str)} for n, _, ax in spec.inputs}
            torch.onnx.export(module, example, str(path), dynamo=False, input_names=names, output_names=["output"],
                              dynamic_axes=axes, opset_version=17)  # fmt: skip
        else:
            dims = {a: torch.export.Dim(a) for _, _, ax in spec.inputs for a in ax if isinstance(a, str)}
            shapes = tuple({i: dims[a] for i, a in enumerate(ax) if isinstance(a, str)} for _, _, ax in spec.inputs)
            try:
                program = torch.onnx.export(module, example, dynamo=True, input_names=names, output_names=["output"],
                                            dynamic_shapes=shapes, verbose=False)  # fmt: skip
            except Exception:  # named dims refused (a constraint torch found): let torch choose what stays dynamic
                auto = tuple({i: torch.export.Dim.AUTO for i in d} for d in shapes)
                program = torch.onnx.export(module, example, dynamo=True, input_names=names, output_names=["output"],
                                            dynamic_shapes=auto, verbose=False)  # fmt: skip
            program.save(str(path))
    onnx.save(onnx.load(str(path)), str(path))  # one file: no external data


def make_feed_example(spec: TorchSpec) -> tuple:
    """The example inputs of an export, at the spec's example sizes."""
    import torch

    gen = torch.Generator().manual_seed(1)
    out = []
    for _, kind, axes in spec.inputs:
        shape = tuple(a if isinstance(a, int) else spec.example[a] for a in axes)
        if kind == "ids":
            out.append(torch.randint(2, VOCAB, shape, generator=gen))
        elif kind == "mask":
            out.append(torch.ones(shape, dtype=torch.int64))
        else:
            out.append(torch.randn(shape, generator=gen))
    return tuple(out)


def build_torch(spec: TorchSpec, exporter: str) -> dict:
    """Export one model with one exporter and record its truth."""
    import onnx

    key = f"{spec.name}-{exporter}"
    path = CACHE / f"{key}.onnx"
    start = time.perf_counter()
    export(spec, exporter, path)
    seconds = time.perf_counter() - start
    model = onnx.load(str(path))
    meta = {"model": spec.name, "family": spec.family, "exporter": exporter, "export_seconds": round(seconds, 1)}
    try:
        return record(key, model, spec.inputs, spec.sizes, meta)
    except Exception as exc:
        if spec.fallback is None:
            raise
        meta["notes_before"] = f"does not run at {spec.sizes}: {type(exc).__name__}: {str(exc)[:200]}"
        entry = record(key, model, spec.inputs, spec.fallback, meta)
        entry["notes"].append(f"fallback sizes: {meta['notes_before']}")
        (CACHE / f"{key}.json").write_text(json.dumps(entry))
        return entry


def symbolic_light(model: Any, axes: dict[int, str], batch_reshapes: bool = False) -> Any:
    """A copy of a light model whose data input (and output batch) has the named dims symbolic.

    ``batch_reshapes``: the shape ``[1, k, ...]`` of every Reshape given by an initializer becomes
    ``[-1, k, ...]``, so a model that flattens for its classifier runs at any batch.
    """
    import onnx
    from onnx import numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.value_info[:]
    if batch_reshapes:
        shapes = {n.input[1] for n in out.graph.node if n.op_type == "Reshape" and len(n.input) > 1}
        for i, init in enumerate(out.graph.initializer):
            value = numpy_helper.to_array(init) if init.name in shapes else None
            if value is not None and value.ndim == 1 and value.size > 1 and value[0] == 1 and -1 not in value:
                value = value.copy()
                value[0] = -1
                out.graph.initializer[i].CopyFrom(numpy_helper.from_array(value, init.name))
    inits = {t.name for t in out.graph.initializer}
    data = next(i for i in out.graph.input if i.name not in inits)
    for i, name in axes.items():
        data.type.tensor_type.shape.dim[i].dim_param = name
    for o in out.graph.output:
        dims = o.type.tensor_type.shape.dim
        if "N" in axes.values() and dims:
            dims[0].dim_param = "N"
    return out


def build_light(name: str) -> dict:
    """A light model with the most symbolic input dims it still runs with (N, H, W; then N; then none)."""
    import onnx

    base = onnx.load(str(light_dir() / f"{name}.onnx"))
    inits = {t.name for t in base.graph.initializer}
    data = next(i.name for i in base.graph.input if i.name not in inits)
    errors = []
    for axes, reshapes in (({0: "N", 2: "H", 3: "W"}, False), ({0: "N"}, False), ({0: "N"}, True), ({}, False)):
        model = symbolic_light(base, axes, reshapes)
        declared = next(i for i in model.graph.input if i.name == data).type.tensor_type.shape.dim
        spec_axes = tuple(axes.get(i, d.dim_value) for i, d in enumerate(declared))
        inputs: list[Input] = [(data, "float", spec_axes)]
        try:
            onnx.save(model, str(CACHE / f"{name}.onnx"))
            meta = {"model": name, "family": "onnx light", "exporter": "onnx", "symbolic": sorted(axes.values())}
            entry = record(name, model, inputs, LIGHT_SIZES, meta)
            edit = ", Reshape shapes [1, ...] made [-1, ...]" if reshapes else ""
            entry["notes"].append(f"symbolic {sorted(axes.values()) or 'none'}{edit}")
            entry["tried"] = errors
            (CACHE / f"{name}.json").write_text(json.dumps(entry))
            return entry
        except Exception as exc:
            errors.append(f"with {sorted(axes.values())} symbolic: {type(exc).__name__}: {str(exc)[:200]}")
    raise RuntimeError("; ".join(errors))


def _failures() -> dict[str, str]:
    return json.loads(FAILED.read_text()) if FAILED.exists() else {}


def build(names: list[str] | None = None, rebuild: bool = False, log: Callable[[str], None] = print) -> dict[str, str]:
    """Build (or keep the cached) corpus entries of ``names`` (all by default); returns key -> failure."""
    CACHE.mkdir(parents=True, exist_ok=True)
    failed = _failures()
    for name in names or model_names():
        for key in keys_for(name):
            have = (CACHE / f"{key}.json").exists() and (CACHE / f"{key}.onnx").exists()
            if not rebuild and (have or key in failed):
                continue
            start = time.perf_counter()
            try:
                if key.startswith("light_"):
                    build_light(key)
                else:
                    model, _, exporter = key.rpartition("-")
                    build_torch(SPECS_BY_NAME[model], exporter)
                failed.pop(key, None)
                log(f"built {key} in {time.perf_counter() - start:.1f} s")
            except Exception as exc:
                failed[key] = f"{type(exc).__name__}: {str(exc)[:300]}"
                log(f"FAILED {key}: {failed[key]}\n{traceback.format_exc(limit=3)}")
                for suffix in (".json", ".onnx"):
                    (CACHE / f"{key}{suffix}").unlink(missing_ok=True)
            FAILED.write_text(json.dumps(failed, indent=1, sort_keys=True))
    return failed


def load(key: str, strip: bool = False) -> tuple[Any, dict]:
    """A cached corpus entry: the onnx model and its JSON record (truth, bindings, notes).

    ``strip`` removes the model's ``value_info`` (the dynamo exporter records torch's own shapes there).
    """
    import onnx

    model = onnx.load(str(CACHE / f"{key}.onnx"))
    if strip:
        del model.graph.value_info[:]
    return model, json.loads((CACHE / f"{key}.json").read_text())


def available(names: list[str] | None = None) -> list[str]:
    """Keys of the cached entries of ``names`` (all by default), in corpus order."""
    return [k for n in names or model_names() for k in keys_for(n) if (CACHE / f"{k}.json").exists()]


def main() -> None:
    """Build the corpus (``--rebuild`` redoes cached entries and retries failures)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--models", default="", help="comma-separated model names or entries (gpt2, swin-ts)")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n] or None
    failed = build(names, args.rebuild)
    print(f"{len(available(names))} entries cached in {CACHE}; {len(failed)} failed: {sorted(failed)}")


if __name__ == "__main__":
    main()
