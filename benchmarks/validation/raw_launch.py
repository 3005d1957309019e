"""Raw-launch harness: run a TileLang-generated kernel with no TileLang Python source.

Given the .cu TileLang 0.1.15 wrote (a corpus file, a fixture), write a standalone CUDA host
program that `#include`s that very text, allocates every pointer parameter on the device (a fixed
generous size, filled with deterministic small finite values of the pointee type), takes the
scalar parameters from `--param`, launches `--grid` blocks of the kernel's `__launch_bounds__`
threads with the dynamic shared memory it needs, checks for errors and dumps the first bytes of
every pointer buffer to a file, so that two builds (a control and an edited kernel) can be
compared byte for byte.  The signature comes from pipelint's own parser.

    python benchmarks/validation/raw_launch.py KERNEL.cu -o BUILD [--grid 1,1,1] [--param T_seq=64]
        [--delete-lines 79] [--smem BYTES|max] [--build]          # BUILD/raw_launch OUT.bin
    python benchmarks/validation/raw_launch.py --compare BUILD/meta.json A.bin B.bin

The text compiled is the .cu's own, with two changes that keep every line where it was:
`#line` directives become comments (so compute-sanitizer cites lines of the .cu, not of the
TileLang Python; `--keep-line-directives` compiles the text byte for byte), and each line of
`--delete-lines` is replaced by a comment naming it (the edit; `--replace-line N=TEXT` puts one
line of instrumentation in place of line N).  TMA kernels (`CUtensorMap`
parameters) are out of scope: refused.  The driver over a manifest is run_raw.py beside this file.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

BUFFER_BYTES = 64 << 20          # every pointer parameter gets this much device memory
DUMP_BYTES = 4 << 20             # and this much of it is written out after the launch
SMEM_MARGIN = 64 << 10           # beyond the highest dynamic-shared-memory alias offset
DEFAULT_INT = 128
DEFAULT_FLOAT = 1.0


class Refused(Exception):
    """A kernel this harness cannot launch (TMA descriptors, unknown types): said in one line."""


# ------------------------------------------------------------------ element types
# pointee type -> (category, element bytes).  Float categories get values k/64 in [-1, 1]
# (k/8 and k/4 for the fp8 formats), exact in every format; integers get 0..3.
TYPES: dict[str, tuple[str, int]] = {
    "float": ("f32", 4), "tfloat32_t": ("f32", 4), "double": ("f64", 8),
    "half_t": ("f16", 2), "half": ("f16", 2), "__half": ("f16", 2),
    "bfloat16_t": ("bf16", 2), "__nv_bfloat16": ("bf16", 2), "nv_bfloat16": ("bf16", 2),
    "fp8_e4_t": ("e4m3", 1), "float_e4m3_t": ("e4m3", 1), "__nv_fp8_e4m3": ("e4m3", 1),
    "fp8_e5_t": ("e5m2", 1), "float_e5m2_t": ("e5m2", 1), "__nv_fp8_e5m2": ("e5m2", 1),
    "int": ("i32", 4), "int32_t": ("i32", 4), "unsigned": ("u32", 4), "unsigned int": ("u32", 4),
    "uint32_t": ("u32", 4), "uint": ("u32", 4), "short": ("i16", 2), "int16_t": ("i16", 2),
    "ushort": ("u16", 2), "uint16_t": ("u16", 2), "signed char": ("i8", 1), "int8_t": ("i8", 1),
    "char": ("i8", 1), "uchar": ("u8", 1), "unsigned char": ("u8", 1), "uint8_t": ("u8", 1),
    "bool": ("bool", 1), "int64_t": ("i64", 8), "long long": ("i64", 8), "uint64_t": ("u64", 8),
}
INT_SCALARS = {"int", "int32_t", "unsigned", "unsigned int", "uint32_t", "uint", "int64_t", "long long",
               "uint64_t", "short", "int16_t", "signed char", "int8_t", "char", "uchar", "unsigned char",
               "uint8_t", "bool", "long", "size_t"}
FLOAT_SCALARS = {"float", "double"}


def _encode_minifloat(v: float, exp_bits: int, man_bits: int) -> int:
    if v == 0:
        return 0
    sign = 0x80 if v < 0 else 0
    x, e = abs(v), 0
    while x >= 2:
        x, e = x / 2, e + 1
    while x < 1:
        x, e = x * 2, e - 1
    bias = (1 << (exp_bits - 1)) - 1
    man = round((x - 1) * (1 << man_bits))
    assert 0 < e + bias < (1 << exp_bits) and man < (1 << man_bits), (v, e, man)
    return sign | ((e + bias) << man_bits) | man


def _decode_minifloat(b: int, exp_bits: int, man_bits: int) -> float:
    sign = -1.0 if b & 0x80 else 1.0
    e = (b >> man_bits) & ((1 << exp_bits) - 1)
    m = b & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if exp_bits == 4 and e == 15 and m == 7:              # e4m3 (fn): only S.1111.111 is NaN
        return float("nan")
    if exp_bits == 5 and e == 31:
        return float("nan") if m else sign * float("inf")
    if e == 0:
        return sign * m / (1 << man_bits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


def value_table(category: str) -> list[bytes]:
    """The encodings a buffer of this category is filled from (little-endian)."""
    if category in ("e4m3", "e5m2"):
        steps = 8 if category == "e4m3" else 4
        bits = (4, 3) if category == "e4m3" else (5, 2)
        return [bytes([_encode_minifloat(k / steps, *bits)]) for k in range(-steps, steps + 1)]
    vals = [k / 64 for k in range(-64, 65)]
    if category == "f32":
        return [struct.pack("<f", v) for v in vals]
    if category == "f64":
        return [struct.pack("<d", v) for v in vals]
    if category == "f16":
        return [struct.pack("<e", v) for v in vals]
    if category == "bf16":
        return [struct.pack("<f", v)[2:] for v in vals]     # the high half of the float (exact here)
    if category == "bool":
        return [b"\x00", b"\x01"]
    size = {"8": 1, "16": 2, "32": 4, "64": 8}[category[1:]]
    return [k.to_bytes(size, "little") for k in range(4)]


# ------------------------------------------------------------------ the kernel
@dataclass
class Param:
    name: str
    type: str                       # as parsed: "const"? stripped, e.g. "half_t*" or "int"
    pointer: bool
    const: bool
    pointee: str = ""
    category: str = ""
    elem_bytes: int = 0


@dataclass
class Kernel:
    name: str
    threads: int
    params: list[Param]
    dynamic_smem_name: str | None
    smem_offsets: list[int] = field(default_factory=list)
    line: int = 0


def find_kernel(text: str, name: str | None = None) -> Kernel:
    from pipelint.cuda.parser import parse

    unit = parse(text).unit
    kernels = [f for f in unit.functions() if f.is_kernel]
    if name:
        kernels = [f for f in kernels if f.name == name]
    if not kernels:
        raise Refused(f"no __global__ kernel definition{f' named {name}' if name else ''} in the file")
    if len(kernels) > 1:
        raise Refused("several kernels: pick one with --kernel (" + ", ".join(f.name for f in kernels) + ")")
    fn = kernels[0]
    bounds = fn.attribute("__launch_bounds__")
    if bounds is None or not bounds.args or not hasattr(bounds.args[0], "text"):
        raise Refused(f"{fn.name}: no numeric __launch_bounds__(THREADS, ...) to take the block size from")
    threads = int(bounds.args[0].text, 0)
    params = []
    for p in fn.params:
        if "CUtensorMap" in p.type:
            raise Refused(f"{fn.name}: parameter {p.name} is a CUtensorMap (TMA): TMA kernels are out of scope "
                          "for the raw-launch harness (the descriptors need the tensors' shapes and TileLang's "
                          "host code)")
        if p.name is None:
            raise Refused(f"{fn.name}: an unnamed parameter")
        pointer = p.type.endswith("*")
        base = p.type.rstrip("*").strip()
        if p.type.count("*") > 1:
            raise Refused(f"{fn.name}: parameter {p.name} is a pointer to a pointer ({p.type})")
        param = Param(p.name, p.type, pointer, "const" in p.specifiers)
        if pointer:
            if base not in TYPES:
                raise Refused(f"{fn.name}: parameter {p.name} points to {base!r}, a type the harness does not "
                              "know how to fill (add it to TYPES)")
            param.pointee = base
            param.category, param.elem_bytes = TYPES[base]
        params.append(param)
    dyn = re.search(r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?[\w:]+\s+(\w+)\s*\[\s*\]", text)
    offsets: list[int] = []
    if dyn:
        offsets = sorted({int(m) for m in re.findall(rf"\(char\s*\*\)\s*{dyn.group(1)}\s*\+\s*(\d+)", text)})
    return Kernel(fn.name, threads, params, dyn.group(1) if dyn else None, offsets, fn.span.line)


def smem_estimate(kernel: Kernel) -> int:
    """Highest `buf_dyn_shmem + OFF` alias plus a margin (the last buffer's size is not written
    down in the .cu); the host program clamps it to what the device allows beside static shared."""
    if kernel.dynamic_smem_name is None:
        return 0
    return (max(kernel.smem_offsets, default=0) + SMEM_MARGIN + 1023) // 1024 * 1024


def edit_text(text: str, delete_lines: list[int], keep_line_directives: bool = False,
              replace_lines: dict[int, str] | None = None) -> tuple[str, list[dict]]:
    """The text to compile: deleted lines become comments, `#line` directives comments too, a
    replaced line is the given text (one line: an instrumentation such as a delay); every other
    line is untouched and every line keeps its number."""
    lines = text.split("\n")
    deleted = []
    for n, new in sorted((replace_lines or {}).items()):
        if not 1 <= n <= len(lines) or "\n" in new or n in delete_lines:
            raise Refused(f"--replace-line {n}: not a line of the file, or several lines, or also deleted")
        deleted.append({"line": n, "text": lines[n - 1].strip(), "replaced_by": new})
        lines[n - 1] = new + f"  // raw_launch: replaced line {n}"
    for n in delete_lines:
        if not 1 <= n <= len(lines):
            raise Refused(f"--delete-lines {n}: the file has {len(lines)} lines")
        original = lines[n - 1]
        if original.rstrip().endswith("\\"):
            raise Refused(f"--delete-lines {n}: a continued (backslash) line")
        deleted.append({"line": n, "text": original.strip()})
        lines[n - 1] = f"// raw_launch: deleted line {n}"
    if not keep_line_directives:
        lines = [("// " + ln) if re.match(r"\s*#\s*line\b", ln) else ln for ln in lines]
    return "\n".join(lines), deleted


# ------------------------------------------------------------------ the host program
def _parse_triple(s: str) -> tuple[int, int, int]:
    parts = [int(x) for x in s.split(",")]
    if not 1 <= len(parts) <= 3 or any(p < 1 for p in parts):
        raise argparse.ArgumentTypeError(f"{s!r}: X[,Y[,Z]] with positive integers")
    return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]


def _c_bytes(b: bytes) -> str:
    return "{" + ",".join(f"0x{x:02x}" for x in b) + "}"


def host_program(kernel: Kernel, scalars: dict[str, str], grid: tuple[int, int, int], block: tuple[int, int, int],
                 smem: int | str, buffer_bytes: int, dump_bytes: int, seed: int, source: str,
                 scrub_smem: bool = False) -> str:
    tables, fills, args, decls = [], [], [], []
    categories = sorted({p.category for p in kernel.params if p.pointer})
    for cat in categories:
        table = value_table(cat)
        size = len(table[0])
        tables.append(f"static const unsigned char T_{cat}[{len(table)}][{size}] = {{"
                      + ",".join(_c_bytes(t) for t in table) + "};")
    for i, p in enumerate(kernel.params):
        if p.pointer:
            decls.append(f"  {p.pointee}* d_{p.name} = nullptr;")
            fills.append(f"  CK(cudaMalloc((void**)&d_{p.name}, BUFFER_BYTES));\n"
                         f"  rl_fill(host, (const unsigned char*)T_{p.category}, sizeof(T_{p.category}[0]), "
                         f"sizeof(T_{p.category}) / sizeof(T_{p.category}[0]), SEED + {i});\n"
                         f"  CK(cudaMemcpy(d_{p.name}, host.data(), BUFFER_BYTES, cudaMemcpyHostToDevice));\n"
                         f"  bufs.push_back((const void*)d_{p.name});")
            args.append(f"d_{p.name}")
        else:
            value = scalars.get(p.name)
            if p.type in INT_SCALARS:
                decls.append(f"  {p.type} p_{p.name} = ({p.type})({value if value is not None else DEFAULT_INT});")
            elif p.type in FLOAT_SCALARS:
                v = float(value) if value is not None else DEFAULT_FLOAT
                decls.append(f"  {p.type} p_{p.name} = ({p.type})({v!r});")
            elif value is not None:
                decls.append(f"  {p.type} p_{p.name} = ({p.type})({value});")
            else:
                raise Refused(f"{kernel.name}: scalar parameter {p.name} of type {p.type}: give --param {p.name}=VALUE")
            args.append(f"p_{p.name}")
    smem_expr = "-1" if smem == "max" else str(int(smem))
    g, b = ",".join(map(str, grid)), ",".join(map(str, block))
    return f"""// Generated by benchmarks/validation/raw_launch.py from {source}
// kernel {kernel.name}: grid ({grid[0]},{grid[1]},{grid[2]}) x block ({block[0]},{block[1]},{block[2]})
#include "kernel.cu"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do {{ cudaError_t e_ = (x); if (e_ != cudaSuccess) {{ \\
  std::fprintf(stderr, "RAW_LAUNCH cuda error %s at %s:%d: %s\\n", cudaGetErrorName(e_), __FILE__, __LINE__, \\
               cudaGetErrorString(e_)); std::exit(3); }} }} while (0)

static const size_t BUFFER_BYTES = {buffer_bytes}ull;
static const size_t DUMP_BYTES = {min(dump_bytes, buffer_bytes)}ull;
static const unsigned long long SEED = {seed}ull;
{chr(10).join(tables)}

static unsigned long long rl_splitmix(unsigned long long& s) {{
  unsigned long long z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull; z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}}

static void rl_fill(std::vector<unsigned char>& host, const unsigned char* table, size_t esize, size_t n,
                 unsigned long long seed) {{
  unsigned long long s = seed * 0x2545f4914f6cdd1dull + 1;
  for (size_t i = 0; i + esize <= host.size(); i += esize)
    std::memcpy(&host[i], table + (rl_splitmix(s) % n) * esize, esize);
}}

// --scrub-smem: before the launch, every SM's shared memory is filled with 0xff bytes (NaN in f16,
// bf16 and f32), so that a read of shared memory no thread of this launch has written yet shows
// up in the output (best effort: where the next block's shared memory lies is not promised).
__global__ void rl_scrub_smem_kernel(unsigned words) {{
  extern __shared__ unsigned rl_scrub_words[];
  volatile unsigned* w = rl_scrub_words;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = 0xffffffffu;
}}

static void rl_scrub_smem() {{
  int dev = 0, optin = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaFuncSetAttribute((const void*)rl_scrub_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  rl_scrub_smem_kernel<<<sms * 4, 1024, (size_t)optin>>>((unsigned)(optin / 4));
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}}

int main(int argc, char** argv) {{
  const char* out = argc > 1 ? argv[1] : "raw_launch.bin";
  std::vector<unsigned char> host(BUFFER_BYTES);
  std::vector<const void*> bufs;
{chr(10).join(decls)}
{chr(10).join(fills)}
  int dev = 0, optin = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, (const void*){kernel.name}));
  long long smem = {smem_expr if kernel.dynamic_smem_name else "0"};
  long long room = (long long)optin - (long long)fa.sharedSizeBytes;
  if (smem < 0 || smem > room) smem = {"room" if kernel.dynamic_smem_name else "0"};
  if (smem > 0)
    CK(cudaFuncSetAttribute((const void*){kernel.name}, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  std::printf("RAW_LAUNCH launch {kernel.name} grid=({g}) block=({b}) "
              "dynamic_smem=%lld static_smem=%zu regs=%d\\n", smem, (size_t)fa.sharedSizeBytes, fa.numRegs);
  std::fflush(stdout);
  {"rl_scrub_smem();" if scrub_smem else "// (no --scrub-smem)"}
  auto t0 = std::chrono::steady_clock::now();
  {kernel.name}<<<dim3({g}), dim3({b}), (size_t)smem>>>({", ".join(args)});
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  FILE* f = std::fopen(out, "wb");
  if (!f) {{ std::perror(out); return 4; }}
  for (const void* b : bufs) {{
    CK(cudaMemcpy(host.data(), b, DUMP_BYTES, cudaMemcpyDeviceToHost));
    std::fwrite(host.data(), 1, DUMP_BYTES, f);
  }}
  std::fclose(f);
  std::printf("RAW_LAUNCH ok kernel_ms=%.3f dumped=%zu buffers x %zu bytes to %s\\n", ms, bufs.size(), DUMP_BYTES, out);
  return 0;
}}
"""


# ------------------------------------------------------------------ TileLang's headers and nvcc
def tilelang_include_dirs() -> list[str]:
    """tl_templates and CUTLASS as TileLang finds them (tilelang/env.py): $TL_TEMPLATE_PATH /
    $TL_CUTLASS_PATH, else the installed package's `src` and `3rdparty/cutlass/include` (a
    development checkout keeps 3rdparty beside the package).  The package is located without
    importing it (importing starts TVM)."""
    spec = importlib.util.find_spec("tilelang")
    root = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
    third = None
    if root is not None:
        third = root / "3rdparty" if (root / "3rdparty").exists() else root.parent / "3rdparty"
    template = os.environ.get("TL_TEMPLATE_PATH") or (str(third / ".." / "src") if third else None)
    cutlass = os.environ.get("TL_CUTLASS_PATH") or (str(third / "cutlass" / "include") if third else None)
    found = [str(Path(d).resolve()) for d in (template, cutlass) if d and Path(d).is_dir()]
    if len(found) < 2:
        raise Refused(f"TileLang's headers not found (tilelang package at {root}; set TL_TEMPLATE_PATH and "
                      "TL_CUTLASS_PATH)")
    return found


def nvcc_command(build: Path, arch: str, fast_math: bool, nvcc: str = "nvcc") -> list[str]:
    cmd = [nvcc, "-std=c++20", "-w", "-Xcudafe", "--diag_suppress=177", "-lineinfo", "-O2",
           "-gencode", f"arch=compute_{arch[3:]},code={arch}",
           *[f"-I{d}" for d in tilelang_include_dirs()],
           str(build / "host.cu"), "-o", str(build / "raw_launch")]
    if fast_math:
        cmd.append("--use_fast_math")
    return cmd


def generate(cu: Path, build: Path, *, kernel_name: str | None = None, grid=(1, 1, 1), block=None,
             scalars: dict[str, str] | None = None, smem: int | str | None = None, delete_lines=(),
             buffer_bytes: int = BUFFER_BYTES, dump_bytes: int = DUMP_BYTES, seed: int = 0,
             keep_line_directives: bool = False, arch: str = "sm_90a", fast_math: bool = False,
             replace_lines: dict[int, str] | None = None, scrub_smem: bool = False) -> dict:
    """Write BUILD/kernel.cu, host.cu and meta.json; return the meta."""
    text = cu.read_text(encoding="utf-8")
    kernel = find_kernel(text, kernel_name)
    scalars = dict(scalars or {})
    unknown = set(scalars) - {p.name for p in kernel.params if not p.pointer}
    if unknown:
        raise Refused(f"--param {', '.join(sorted(unknown))}: not a scalar parameter of {kernel.name} "
                      f"({', '.join(p.name for p in kernel.params if not p.pointer) or 'it has none'})")
    block = tuple(block or (kernel.threads, 1, 1))
    if block[0] * block[1] * block[2] > kernel.threads:
        raise Refused(f"block {block} is more than __launch_bounds__({kernel.threads})")
    compiled, deleted = edit_text(text, sorted(set(delete_lines)), keep_line_directives, replace_lines)
    smem_bytes: int | str = smem if smem is not None else smem_estimate(kernel)
    build.mkdir(parents=True, exist_ok=True)
    (build / "kernel.cu").write_text(compiled, encoding="utf-8")
    (build / "host.cu").write_text(host_program(kernel, scalars, grid, block, smem_bytes, buffer_bytes, dump_bytes,
                                                seed, str(cu), scrub_smem), encoding="utf-8")
    dump = min(dump_bytes, buffer_bytes)
    buffers, offset = [], 0
    for p in kernel.params:
        if p.pointer:
            buffers.append({"name": p.name, "type": p.pointee, "category": p.category, "elem_bytes": p.elem_bytes,
                            "const": p.const, "offset": offset, "bytes": dump})
            offset += dump
    meta = {"source": str(cu), "kernel": kernel.name, "kernel_line": kernel.line, "threads": kernel.threads,
            "grid": list(grid), "block": list(block), "smem_requested": smem_bytes,
            "smem_alias_offsets": kernel.smem_offsets, "dynamic_smem": kernel.dynamic_smem_name,
            "scalars": {p.name: scalars.get(p.name, str(DEFAULT_FLOAT if p.type in FLOAT_SCALARS else DEFAULT_INT))
                        for p in kernel.params if not p.pointer},
            "params": [asdict(p) for p in kernel.params], "buffers": buffers, "buffer_bytes": buffer_bytes,
            "deleted": deleted, "line_directives_kept": keep_line_directives, "seed": seed, "arch": arch,
            "fast_math": fast_math, "scrub_smem": scrub_smem}
    (build / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def build_binary(build: Path, arch: str = "sm_90a", fast_math: bool = False, nvcc: str = "nvcc",
                 timeout: float = 600) -> dict:
    import time

    cmd = nvcc_command(build, arch, fast_math, nvcc)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        ok, tail = proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        ok, tail = False, f"nvcc timed out after {timeout} s"
    return {"ok": ok, "seconds": round(time.monotonic() - t0, 1), "command": " ".join(cmd), "log": tail}


# ------------------------------------------------------------------ comparing two dumps
def _decode(category: str, raw: bytes):
    import numpy as np

    if category == "f32":
        return np.frombuffer(raw, np.float32).astype(np.float64)
    if category == "f64":
        return np.frombuffer(raw, np.float64)
    if category == "f16":
        return np.frombuffer(raw, np.float16).astype(np.float64)
    if category == "bf16":
        return (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if category in ("e4m3", "e5m2"):
        bits = (4, 3) if category == "e4m3" else (5, 2)
        lut = np.array([_decode_minifloat(b, *bits) for b in range(256)])
        return lut[np.frombuffer(raw, np.uint8)]
    if category == "bool":
        return np.frombuffer(raw, np.uint8).astype(np.float64)
    dt = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
          "i64": np.int64, "u64": np.uint64}[category]
    return np.frombuffer(raw, dt).astype(np.float64)


def compare(meta: dict, a: Path, b: Path, atol: float = 1e-2, rtol: float = 1e-2) -> dict:
    """Byte-for-byte, then per buffer numerically: elements that differ, the largest difference,
    non-finite values in each dump."""
    import numpy as np

    da, db = a.read_bytes(), b.read_bytes()
    result: dict = {"identical": da == db, "buffers": {}}
    if len(da) != len(db):
        result.update(identical=False, error=f"sizes differ: {len(da)} vs {len(db)}")
        return result
    for buf in meta["buffers"]:
        ra, rb = da[buf["offset"]:buf["offset"] + buf["bytes"]], db[buf["offset"]:buf["offset"] + buf["bytes"]]
        entry: dict = {"identical": ra == rb, "const": buf["const"]}
        if ra != rb:
            xa, xb = _decode(buf["category"], ra), _decode(buf["category"], rb)
            fa, fb = np.isfinite(xa), np.isfinite(xb)
            both = fa & fb
            diff = np.abs(xa[both] - xb[both])
            bad = (~np.isclose(xa, xb, atol=atol, rtol=rtol, equal_nan=True))
            both_nan = np.isnan(xa) & np.isnan(xb)
            entry.update(differing_elements=int(np.count_nonzero(xa != xb) - np.count_nonzero(both_nan)),
                         beyond_tolerance=int(np.count_nonzero(bad)), elements=int(xa.size),
                         max_abs_diff=float(diff.max()) if diff.size else None,
                         nonfinite_a=int((~fa).sum()), nonfinite_b=int((~fb).sum()),
                         first_differing_element=int(np.argmax(xa != xb)))
        result["buffers"][buf["name"]] = entry
    result["within_tolerance"] = all(
        e["identical"] or (e.get("beyond_tolerance") == 0 and e["nonfinite_a"] == e["nonfinite_b"])
        for e in result["buffers"].values())
    return result


def buffers_of(meta: dict, dump: Path) -> dict:
    """Every dumped buffer, decoded to a flat float64 array, by parameter name."""
    raw = dump.read_bytes()
    return {b["name"]: _decode(b["category"], raw[b["offset"]:b["offset"] + b["bytes"]]) for b in meta["buffers"]}


def check_reference(meta: dict, dump: Path, ref: dict) -> dict:
    """`ref` = {"got": EXPR, "want": EXPR, "atol": A, "rtol": R}: numpy expressions over the decoded
    buffers (by parameter name; `np` is numpy).  A manifest is trusted code: it is evaluated."""
    import numpy as np

    names = {"np": np, **buffers_of(meta, dump)}
    got = np.asarray(eval(ref["got"], {"__builtins__": {}}, names), dtype=np.float64)  # noqa: S307
    want = np.asarray(eval(ref["want"], {"__builtins__": {}}, names), dtype=np.float64)  # noqa: S307
    atol, rtol = float(ref.get("atol", 5e-2)), float(ref.get("rtol", 1e-2))
    close = np.isclose(got, want, atol=atol, rtol=rtol)
    return {"matches": bool(close.all()), "elements": int(got.size), "mismatched": int((~close).sum()),
            "max_abs_error": float(np.nanmax(np.abs(got - want))) if got.size else None,
            "nonfinite": int((~np.isfinite(got)).sum()),
            "max_abs_want": float(np.abs(want).max()) if want.size else None,
            "atol": atol, "rtol": rtol}


# ------------------------------------------------------------------ command line
def _lines(s: str) -> list[int]:
    out: list[int] = []
    for part in s.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out += range(int(lo), int(hi) + 1)
        elif part.strip():
            out.append(int(part))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cu", nargs="?", help="the TileLang-generated .cu")
    ap.add_argument("-o", "--out", help="build folder (kernel.cu, host.cu, meta.json, raw_launch)")
    ap.add_argument("--kernel", help="the kernel, when the file has several")
    ap.add_argument("--grid", type=_parse_triple, default=(1, 1, 1), help="blocks X,Y,Z (default 1,1,1)")
    ap.add_argument("--block", type=_parse_triple, default=None, help="threads (default: __launch_bounds__)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help=f"a scalar parameter (ints default {DEFAULT_INT}, floats {DEFAULT_FLOAT})")
    ap.add_argument("--smem", default=None, help="dynamic shared memory in bytes, or 'max' (default: the highest "
                    f"alias offset + {SMEM_MARGIN >> 10} KiB, clamped to the device)")
    ap.add_argument("--delete-lines", type=_lines, default=[], metavar="N,M,A-B", help="lines to delete (the edit)")
    ap.add_argument("--replace-line", action="append", default=[], metavar="N=TEXT",
                    help="replace line N by one line of TEXT (instrumentation: a delay, a barrier); repeatable")
    ap.add_argument("--scrub-smem", action="store_true",
                    help="fill every SM's shared memory with 0xff (NaN) before the launch")
    ap.add_argument("--buffer-bytes", type=int, default=BUFFER_BYTES)
    ap.add_argument("--dump-bytes", type=int, default=DUMP_BYTES)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arch", default="sm_90a", help="nvcc target (default sm_90a: the H200)")
    ap.add_argument("--fast-math", action="store_true", help="--use_fast_math (TL_ENABLE_FAST_MATH kernels)")
    ap.add_argument("--keep-line-directives", action="store_true", help="compile the text byte for byte")
    ap.add_argument("--build", action="store_true", help="also run nvcc (BUILD/raw_launch)")
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", shutil.which("nvcc") or "nvcc"))
    ap.add_argument("--compare", nargs=3, metavar=("META", "A", "B"), help="compare two dumps (JSON on stdout)")
    args = ap.parse_args(argv)
    if args.compare:
        meta = json.loads(Path(args.compare[0]).read_text())
        res = compare(meta, Path(args.compare[1]), Path(args.compare[2]))
        print(json.dumps(res, indent=2))
        return 0 if res["identical"] else 1
    if not args.cu or not args.out:
        ap.error("give KERNEL.cu and -o BUILD (or --compare META A B)")
    scalars = dict(p.split("=", 1) for p in args.param)
    smem = args.smem if args.smem in (None, "max") else int(args.smem, 0)
    try:
        meta = generate(Path(args.cu), Path(args.out), kernel_name=args.kernel, grid=args.grid, block=args.block,
                        scalars=scalars, smem=smem, delete_lines=args.delete_lines, buffer_bytes=args.buffer_bytes,
                        dump_bytes=args.dump_bytes, seed=args.seed, keep_line_directives=args.keep_line_directives,
                        arch=args.arch, fast_math=args.fast_math, scrub_smem=args.scrub_smem,
                        replace_lines={int(r.split("=", 1)[0]): r.split("=", 1)[1] for r in args.replace_line})
        for d in meta["deleted"]:
            how = f"replaced by {d['replaced_by']!r}" if "replaced_by" in d else "deleted"
            print(f"raw_launch: line {d['line']} {how}: {d['text']}", file=sys.stderr)
        print(f"raw_launch: {meta['kernel']} ({meta['threads']} threads) -> {args.out}", file=sys.stderr)
        if args.build:
            res = build_binary(Path(args.out), args.arch, args.fast_math, args.nvcc)
            if not res["ok"]:
                print(res["log"], file=sys.stderr)
                print(f"raw_launch: nvcc failed ({res['seconds']} s)", file=sys.stderr)
                return 1
            print(f"raw_launch: built {args.out}/raw_launch ({res['seconds']} s)", file=sys.stderr)
    except Refused as exc:
        print(f"raw_launch: refused: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
