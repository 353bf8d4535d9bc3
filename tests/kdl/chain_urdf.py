#!/usr/bin/python3
"""Write the chain-only URDF of a robot: the links on the kinematic path ROOT -> TIP and the joints
between them, nothing else.

Why: a KDL::Chain ROOT -> TIP (Tree::getChain) contains only the segments on that path, while a
roboest model of the same joints (loaded with a joint list, the other joints locked at 0 and merged,
fixed joints merged into their parent body) also carries every link hanging off the path: side
branches through fixed joints (frames, the front half of a foot behind a force/torque sensor, ...)
or through locked joints. When such a link has mass, the chain and roboest's model are different
physical systems, and their torques differ (on ergoCub's right leg, r_foot_front, 0.22 kg, hangs on
r_ankle_2 through the fixed joint r_foot_front_ft_sensor). Loaded into roboest, this file is the
KDL chain's physical system exactly, so the two libraries can be compared to round-off.

Kept, in document order: the <robot> element's attributes, top-level <material> elements (visuals
may refer to them), the path's <link> elements (unchanged: inertial, visual, collision), the path's
<joint> elements (unchanged) and top-level <sensor> elements whose <parent> names a kept joint or
link. Everything else (other links and joints, <gazebo>, <transmission>, ...) is dropped.

Usage: chain_urdf.py URDF ROOT TIP OUT   (OUT '-' for stdout)
"""
import sys
import xml.etree.ElementTree as ET


def chain_urdf(src, root, tip):
    robot = ET.parse(src).getroot()
    links = {l.get("name") for l in robot.findall("link")}
    for name in (root, tip):
        if name not in links:
            raise SystemExit("chain_urdf.py: %s: no link %s" % (src, name))
    parent_joint = {}  # child link -> joint element
    for j in robot.findall("joint"):
        child = j.find("child").get("link")
        if child in parent_joint:
            raise SystemExit("chain_urdf.py: %s: link %s has two parent joints" % (src, child))
        parent_joint[child] = j
    keep_links, keep_joints = {tip}, set()
    link = tip
    while link != root:
        j = parent_joint.get(link)
        if j is None:
            raise SystemExit("chain_urdf.py: %s: %s is not below %s" % (src, tip, root))
        keep_joints.add(j.get("name"))
        link = j.find("parent").get("link")
        keep_links.add(link)

    out = ET.Element("robot", dict(robot.attrib))
    out.text = "\n  "
    for el in robot:
        keep = False
        if el.tag == "material":
            keep = True
        elif el.tag == "link":
            keep = el.get("name") in keep_links
        elif el.tag == "joint":
            keep = el.get("name") in keep_joints
        elif el.tag == "sensor":
            p = el.find("parent")
            keep = p is not None and (p.get("joint") in keep_joints or p.get("link") in keep_links)
        if keep:
            out.append(el)
    if len(out):
        out[-1].tail = "\n"
    return ET.ElementTree(out)


def main(argv):
    if len(argv) != 5:
        raise SystemExit("usage: chain_urdf.py URDF ROOT TIP OUT")
    tree = chain_urdf(argv[1], argv[2], argv[3])
    if argv[4] == "-":
        tree.write(sys.stdout, encoding="unicode", xml_declaration=True)
        sys.stdout.write("\n")
    else:
        tree.write(argv[4], encoding="utf-8", xml_declaration=True)


if __name__ == "__main__":
    main(sys.argv)
