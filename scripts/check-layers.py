#!/usr/bin/env python3
"""The library's layering, checked on what the compiler and linker see.

    scripts/check-layers.py BUILD        (BUILD: the build folder holding obj/lib/<module>/<file>.o)

Modules depend downwards only, in the order of LAYERS: a module may include the public header of, and call
into, a module before it, never one after it. Inside a folder, no two files call each other, directly or
round a circle (a file that needs another's helpers and is needed by it means the helpers want a file of
their own). Calls are read from the object files (nm: what each defines, what each needs); includes from
the sources. Prints every violation and exits 1 when there is one, 0 otherwise.
"""
import collections
import glob
import os
import re
import subprocess
import sys

LAYERS = ['core', 'config', 'io', 'metrics', 'model', 'dynamics', 'filters', 'friction', 'observers', 'sim',
          'pipeline',
          'estimators', 'training', 'experiments', 'rde']
# the public header of each module (lib/include/roboest/<name>.h)
HEADER_MODULE = {'core': 'core', 'spatial': 'core', 'config': 'config', 'io': 'io', 'metrics': 'metrics',
                 'model': 'model', 'dynamics': 'dynamics', 'filters': 'filters', 'friction': 'friction',
                 'observers': 'observers', 'observers_biped': 'observers', 'observers_map': 'observers', 'sim': 'sim', 'sim_flight': 'sim', 'sim_contact': 'sim', 'sim_sensors': 'sim', 'sim_gait': 'sim', 'sim_mismatch': 'sim', 'stage': 'pipeline', 'pipeline': 'pipeline', 'estimators': 'estimators',
                 'training': 'training', 'experiments': 'experiments', 'suite_mpi': 'experiments', 'rde': 'rde'}


def rank(module):
    if module not in LAYERS:
        raise SystemExit(f'check-layers: module {module} is not in LAYERS (scripts/check-layers.py)')
    return LAYERS.index(module)


def cycles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    build = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = []

    # includes: public headers and library sources
    include = re.compile(r'^#include "roboest/(\w+)\.h"', re.M)
    for path in sorted(glob.glob(os.path.join(root, 'lib/include/roboest/*.h'))):
        name = os.path.basename(path)[:-2]
        if name not in HEADER_MODULE:
            problems.append(f'lib/include/roboest/{name}.h: a public header of no module (HEADER_MODULE)')
            continue
        for inc in include.findall(open(path).read()):
            if rank(HEADER_MODULE[inc]) > rank(HEADER_MODULE[name]):
                problems.append(f'roboest/{name}.h includes roboest/{inc}.h: {HEADER_MODULE[name]} is below '
                                f'{HEADER_MODULE[inc]}')
    for path in sorted(glob.glob(os.path.join(root, 'lib/*/*.[ch]'))):
        module = os.path.basename(os.path.dirname(path))
        if module == 'include':
            continue
        for inc in include.findall(open(path).read()):
            if rank(HEADER_MODULE[inc]) > rank(module):
                problems.append(f'lib/{module}/{os.path.basename(path)} includes roboest/{inc}.h: {module} is below '
                                f'{HEADER_MODULE[inc]}')

    # calls: the objects of the current sources
    objs = []
    for src in sorted(glob.glob(os.path.join(root, 'lib/*/*.c'))):
        rel = os.path.relpath(src, root)
        obj = os.path.join(build, 'obj', rel[:-2] + '.o')
        if not os.path.exists(obj):
            raise SystemExit(f'check-layers: {obj} is missing: build the library first (make BUILD={build})')
        objs.append((rel.split('/')[1], os.path.basename(rel), obj))
    defined, needed = {}, collections.defaultdict(set)
    for module, name, obj in objs:
        listing = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TDBRVW':
                defined[parts[2]] = (module, name)
            elif len(parts) == 2 and parts[0] == 'U':
                needed[(module, name)].add(parts[1])
    module_edges = collections.defaultdict(set)
    file_edges = collections.defaultdict(set)
    for (module, name), symbols in needed.items():
        for sym in symbols:
            if sym not in defined or defined[sym] == (module, name):
                continue
            dmod, dname = defined[sym]
            if dmod == module:
                file_edges[f'{module}/{name}'].add(f'{module}/{dname}')
            elif rank(dmod) > rank(module):
                problems.append(f'lib/{module}/{name} calls {sym} of lib/{dmod}/{dname}: {module} is below {dmod}')
            module_edges[module].add(dmod)
    files = sorted({f'{m}/{n}' for m, n, _ in objs})
    for comp in cycles(files, file_edges):
        detail = '; '.join(f'{a} -> {", ".join(sorted(b for b in file_edges[a] if b in comp))}' for a in comp)
        problems.append(f'files that call each other: {detail}')
    for comp in cycles(LAYERS, module_edges):
        problems.append(f'modules that call each other: {", ".join(comp)}')

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f'layers: {len(LAYERS)} modules, {len(files)} files, {sum(len(v) for v in file_edges.values())} calls '
          f'between files of one module, no circle, every module calling only those below it')
    return 0


if __name__ == '__main__':
    sys.exit(main())
