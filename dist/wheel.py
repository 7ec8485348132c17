"""Writes a Python wheel whose one script is the `lantern` binary: `pip install` puts
`lantern` on PATH (pip marks a wheel's scripts executable). Python-free at run time.

    python3 dist/wheel.py BINARY OUT_DIR VERSION
"""

import base64
import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

NAME = "lantern_docs_search"
DIST = "lantern-docs-search"


def glibc_floor(binary: Path) -> str:
    """The newest glibc symbol version the binary needs, as a manylinux tag's numbers."""
    try:
        out = subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "2_17"
    found = [tuple(map(int, m)) for m in re.findall(r"GLIBC_(\d+)\.(\d+)", out)]
    major, minor = max(found, default=(2, 17))
    return f"{major}_{minor}"


def is_static(binary: Path) -> bool:
    """Whether the ELF binary asks for no program interpreter (no PT_INTERP): statically
    linked, it runs on any Linux of its architecture, glibc or musl."""
    data = binary.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:  # 64-bit ELF only
        return False
    phoff = int.from_bytes(data[0x20:0x28], "little")
    entsize = int.from_bytes(data[0x36:0x38], "little")
    count = int.from_bytes(data[0x38:0x3A], "little")
    types = [int.from_bytes(data[phoff + i * entsize : phoff + i * entsize + 4], "little") for i in range(count)]
    return 3 not in types  # PT_INTERP


def arch(binary: Path) -> str:
    """The wheel tag's name for the ELF binary's machine."""
    machine = int.from_bytes(binary.read_bytes()[0x12:0x14], "little")
    names = {0x3E: "x86_64", 0xB7: "aarch64"}
    if machine not in names:
        sys.exit(f"dist/wheel.py: {binary} is for ELF machine {machine:#x}, not x86-64 or aarch64")
    return names[machine]


def platform_tag(binary: Path) -> str:
    """manylinux and musllinux alike for a static binary; else the glibc it needs."""
    a = arch(binary)
    if is_static(binary):
        return f"manylinux_2_17_{a}.manylinux2014_{a}.musllinux_1_1_{a}"
    return f"manylinux_{glibc_floor(binary)}_{a}"


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main() -> None:
    binary, out_dir, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    tag = f"py3-none-{platform_tag(binary)}"
    info = f"{NAME}-{version}.dist-info"
    files = {
        f"{NAME}-{version}.data/scripts/lantern": binary.read_bytes(),
        f"{info}/METADATA": (
            "Metadata-Version: 2.1\n"
            f"Name: {DIST}\nVersion: {version}\n"
            "Summary: Search for documentation sites that runs in the reader's browser "
            "(keywords and meaning, offline once visited): `lantern build site/` after your generator.\n"
            "License: MIT OR Apache-2.0\n"
        ).encode(),
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: lantern dist/wheel.py\nRoot-Is-Purelib: false\n" f"Tag: {tag}\n"
        ).encode(),
    }
    record = [record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = out_dir / f"{NAME}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            zi = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            # A regular file (S_IFREG) with its mode: pip marks such an executable script executable.
            zi.external_attr = (0o100755 if name.endswith("/lantern") else 0o100644) << 16
            z.writestr(zi, data)
    print(f"  wrote {path.name}")


if __name__ == "__main__":
    main()
