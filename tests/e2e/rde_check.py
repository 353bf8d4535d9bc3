#!/usr/bin/env python3
"""Second reading of a public-estimator configuration, independent of roboest's C reader: expand the
includes, strip comments, read each key with a regex, then check every number and name the pipeline written
by `roboest import-rde` carries. Usage: rde_check.py CONFIG_DIR PIPELINE.json; prints what differs, exit 1."""
import json
import os
import re
import sys

TOKEN = re.compile(r'"([^"]*)"|([^\s(),"]+)')


def strip_comments(line):
    out, quoted = [], False
    for c in line:
        if c == '"':
            quoted = not quoted
        if c in ';#' and not quoted:
            break
        out.append(c)
    return ''.join(out)


def read(path):
    """{'keys': {key: value}, 'groups': {name: tree}} with values as lists (parentheses) or strings."""
    tree = {'keys': {}, 'groups': {}}
    cur = tree
    text = '\n'.join(strip_comments(l) for l in open(path).read().splitlines())
    # a list may span lines: join everything between '(' and ')'
    text = re.sub(r'\(([^)]*)\)', lambda m: '(' + m.group(1).replace('\n', ' ') + ')', text)
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        inc = re.fullmatch(r'\[include\s+(\S+)\s+"([^"]+)"\]', line)
        sec = re.fullmatch(r'\[(\S+)\]', line)
        if inc:
            tree['groups'][inc.group(1)] = read(os.path.join(os.path.dirname(path), inc.group(2)))
            cur = None
        elif sec:
            cur = tree['groups'][sec.group(1)] = {'keys': {}, 'groups': {}}
        else:
            key, rest = line.split(None, 1)
            rest = rest.strip()
            if rest.startswith('('):
                value = [a or b for a, b in TOKEN.findall(rest[1:-1])]
            else:
                value = TOKEN.fullmatch(rest).group(1) or rest
            cur['keys'][key] = value


    return tree


def main(config_dir, pipeline_path):
    cfg = read(os.path.join(config_dir, 'config.ini'))
    pipe = json.load(open(pipeline_path))
    model = cfg['groups']['MODEL']
    ukf = cfg['groups']['UKF']
    state, meas = ukf['groups']['UKF_STATE'], ukf['groups']['UKF_MEASUREMENT']
    joints = model['keys']['joint_list']
    fts = model['groups'].get('FT', {'keys': {}})['keys'].get('names', [])
    contacts = model['groups'].get('EXTERNAL_CONTACT', {'keys': {}})['keys'].get('frames', [])
    imus = {}
    for kind in ('ACCELEROMETER', 'GYROSCOPE'):
        k = model['groups'].get(kind, {'keys': {}})['keys']
        imus[kind] = dict(zip(k.get('names', []), k.get('frames', [])))

    expect = {}
    num = lambda v: [float(x) for x in v]
    by_name = {}
    for block in state['keys']['dynamics_list']:
        b = state['groups'][block]['keys']
        by_name[b['name']] = b
    for key, name in (('dq', 'ds'), ('tau_m', 'tau_m'), ('tau_f', 'tau_F')):
        expect['q_' + key] = num(by_name[name]['covariance'])
        expect['p0_' + key] = num(by_name[name]['initial_covariance'])
    friction = by_name['tau_F']
    if friction['dynamic_model'] == 'FrictionTorqueStateDynamics':
        for k in ('friction_k0', 'friction_k1', 'friction_k2'):
            expect[k] = num(friction[k])
    for key, names in (('ft', fts), ('contact', contacts)):
        if names:
            expect['q_' + key] = sum((num(by_name[n]['covariance']) for n in names), [])
            expect['p0_' + key] = sum((num(by_name[n]['initial_covariance']) for n in names), [])

    mby = {}
    for block in meas['keys']['dynamics_list']:
        b = meas['groups'][block]['keys']
        mby[b['name']] = b
    expect['r_dq'] = num(mby['ds']['covariance'])
    expect['r_current'] = num(mby['i_m']['covariance'])
    expect['gear_ratio'] = num(mby['i_m']['gear_ratio'])
    expect['k_t'] = num(mby['i_m']['torque_constant'])
    if fts:
        expect['r_ft'] = sum((num(mby[n]['covariance']) for n in fts), [])
    for kind, key, prefix in (('ACCELEROMETER', 'acc', 'accelerometers/'), ('GYROSCOPE', 'gyro', 'gyros/')):
        used = [n for n in imus[kind] if n in mby]
        expect['accelerometers' if key == 'acc' else 'gyroscopes'] = [imus[kind][n] for n in used]
        if used:
            expect['r_' + key] = sum((num(mby[n]['covariance']) for n in used), [])
            expect['signal_' + key] = [prefix + n for n in used]
    for k in ('alpha', 'beta', 'kappa'):
        expect[k] = float(ukf['keys'][k])
    dt = float(cfg['groups']['GENERAL']['keys']['sampling_time'])
    expect['dt'] = dt
    expect['ft_sensors'] = fts
    expect['contacts'] = contacts

    params = pipe['stages'][0]['params']
    errors = []
    for k, v in expect.items():
        if k.startswith('signal_'):
            got = pipe['signals'].get(k[len('signal_'):], {}).get('channel')
        else:
            got = params.get(k)
        if got != v:
            errors.append('%s: pipeline %r, ini %r' % (k, got, v))
    checks = [
        ('model.joints', pipe['model']['joints'], joints),
        ('model.base', pipe['model']['base'], model['keys']['base_link']),
        ('clock.rate', pipe['clock']['rate'], 1 / dt),
        ('stage type', pipe['stages'][0]['type'], 'ukf_torque'),
        ('signals.ft.channel', pipe['signals'].get('ft', {}).get('channel'), ['FTs/' + n for n in fts] or None),
    ]
    for name in ('q', 'dq', 'current'):
        checks.append(('signals.%s.elements' % name, pipe['signals'][name]['elements'], joints))
    for what, got, want in checks:
        if got != want:
            errors.append('%s: pipeline %r, ini %r' % (what, got, want))
    for e in errors:
        print(e)
    print('checked %d parameters and %d bindings' % (len(expect), len(checks)))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
