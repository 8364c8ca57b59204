#!/usr/bin/env python3
"""The GPU architectures a program carries code for: "sm_80 sm_90 (cubin); compute_80 compute_90 (PTX)".

Reads the program's .nv_fatbin section (extracted with binutils' objcopy) without the CUDA
toolkit's cuobjdump, which a machine with nvcc may lack. Layout of the fat binary, as the CUDA
toolkit's fatbinary.h describes it: a 16-byte header (magic 0xBA55ED50, version, header size,
size of the entries), then entries, each with a header of its own (kind 1 PTX, 2 ELF; its header
size; its payload size) whose 32-bit word at byte 28 is the SM version (90 for sm_90).
Usage: fatbin_arches.py PROGRAM
"""
import struct
import subprocess
import sys
import tempfile

MAGIC = 0xBA55ED50


def arches(blob):
    cubin, ptx = set(), set()
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != MAGIC:
            pos += 8  # fat binaries are 8-byte aligned in the section
            continue
        entry, end = pos + header, pos + header + size
        while entry + 32 <= end:
            kind, _v, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            sm = struct.unpack_from("<I", blob, entry + 28)[0]
            (ptx if kind == 1 else cubin).add(sm)
            if entry_header == 0:
                break
            entry += entry_header + payload
        pos = end
    return cubin, ptx


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fatbin_arches.py PROGRAM")
    with tempfile.NamedTemporaryFile() as section:
        done = subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", sys.argv[1], section.name],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("fatbin_arches.py: objcopy: " + done.stderr.strip())
        cubin, ptx = arches(open(section.name, "rb").read())
    if not cubin and not ptx:
        print("no GPU code")
        return
    print(" ".join(f"sm_{a}" for a in sorted(cubin)) + " (cubin); " + " ".join(f"compute_{a}" for a in sorted(ptx)) + " (PTX)")


if __name__ == "__main__":
    main()
