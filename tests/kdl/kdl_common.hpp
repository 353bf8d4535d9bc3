// Helpers shared by the Orocos KDL reference program (tests/kdl/kdl_reference.cpp) and the KDL
// benchmark (tests/bench/bench_kdl.cpp): loading a URDF into a KDL::Tree through ROS kdl_parser and
// urdfdom (so KDL's model never goes through roboest's own URDF parser), and rebuilding trees:
// locking joints, merging fixed segments into their parents, emulating a floating base.
//
// Test and benchmark tooling only: roboest itself is C11 and does not use this.
#ifndef ROBOEST_TESTS_KDL_COMMON_HPP
#define ROBOEST_TESTS_KDL_COMMON_HPP

#include <kdl/chain.hpp>
#include <kdl/tree.hpp>
#include <kdl_parser/kdl_parser.hpp>
#include <urdf_parser/urdf_parser.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rbkdl
{

struct Loaded {
    KDL::Tree tree;
    std::string root;                   // URDF root link = KDL root segment
    KDL::RigidBodyInertia root_inertia; // the root link's inertia (kdl_parser drops it from the tree)
    std::map<std::string, std::pair<double, double>> limits; // position limits of limited joints
};

// The same conversion as kdl_parser's: URDF <inertial> (inertia about the centre of mass, in the
// <inertial><origin> axes) to a KDL inertia about the link frame origin.
inline KDL::RigidBodyInertia inertia_from_urdf(const urdf::InertialSharedPtr &in)
{
    if (!in)
        return KDL::RigidBodyInertia::Zero();
    const urdf::Pose &o = in->origin;
    KDL::Frame f(KDL::Rotation::Quaternion(o.rotation.x, o.rotation.y, o.rotation.z, o.rotation.w),
                 KDL::Vector(o.position.x, o.position.y, o.position.z));
    KDL::RotationalInertia ic(in->ixx, in->iyy, in->izz, in->ixy, in->ixz, in->iyz);
    KDL::RigidBodyInertia rot = f.M * KDL::RigidBodyInertia(0, KDL::Vector::Zero(), ic);
    return KDL::RigidBodyInertia(in->mass, f.p, rot.getRotationalInertia());
}

inline Loaded load_urdf(const std::string &path)
{
    urdf::ModelInterfaceSharedPtr model = urdf::parseURDFFile(path);
    if (!model)
        throw std::runtime_error(path + ": urdfdom could not parse the file");
    Loaded out;
    if (!kdl_parser::treeFromUrdfModel(*model, out.tree))
        throw std::runtime_error(path + ": kdl_parser could not build a KDL tree");
    out.root = model->getRoot()->name;
    out.root_inertia = inertia_from_urdf(model->getRoot()->inertial);
    for (const auto &kv : model->joints_) {
        const urdf::JointSharedPtr &j = kv.second;
        if (j->limits && (j->type == urdf::Joint::REVOLUTE || j->type == urdf::Joint::PRISMATIC))
            out.limits[j->name] = {j->limits->lower, j->limits->upper};
    }
    return out;
}

inline bool movable(const KDL::Segment &s) { return s.getJoint().getType() != KDL::Joint::Fixed; }

// Movable joint name -> KDL q index (q_nr) of a tree.
inline std::map<std::string, unsigned> joint_index(const KDL::Tree &tree)
{
    std::map<std::string, unsigned> idx;
    for (const auto &kv : tree.getSegments())
        if (movable(GetTreeElementSegment(kv.second)))
            idx[GetTreeElementSegment(kv.second).getJoint().getName()] = GetTreeElementQNr(kv.second);
    return idx;
}

// Movable joint names of a tree in KDL's q order.
inline std::vector<std::string> joint_names(const KDL::Tree &tree)
{
    std::vector<std::string> names(tree.getNrOfJoints());
    for (const auto &kv : joint_index(tree))
        names[kv.second] = kv.first;
    return names;
}

inline std::vector<std::string> joint_names(const KDL::Chain &chain)
{
    std::vector<std::string> names;
    for (unsigned i = 0; i < chain.getNrOfSegments(); i++)
        if (movable(chain.getSegment(i)))
            names.push_back(chain.getSegment(i).getJoint().getName());
    return names;
}

// A movable joint made fixed at q = 0, or a fixed joint whose segment is re-expressed: the same
// segment with a Fixed joint and the tip pose it had at q = 0 (the inertia stays in the tip frame).
inline KDL::Segment locked_segment(const KDL::Segment &s)
{
    return KDL::Segment(s.getName(), KDL::Joint(s.getJoint().getName(), KDL::Joint::Fixed), s.pose(0.0),
                        s.getInertia());
}

// The segment `s` re-hooked through a rigid offset F (pose of s's old parent tip in the new parent's
// tip frame): new pose(q) = F * s.pose(q). Rotations about (axis, origin) become rotations about
// (F.M axis, F origin); translations likewise.
inline KDL::Segment rehooked_segment(const KDL::Segment &s, const KDL::Frame &F)
{
    const KDL::Joint &j = s.getJoint();
    KDL::Joint nj(j.getName(), KDL::Joint::Fixed);
    switch (j.getType()) {
    case KDL::Joint::RotAxis:
    case KDL::Joint::RotX:
    case KDL::Joint::RotY:
    case KDL::Joint::RotZ:
        nj = KDL::Joint(j.getName(), F * j.JointOrigin(), F.M * j.JointAxis(), KDL::Joint::RotAxis);
        break;
    case KDL::Joint::TransAxis:
    case KDL::Joint::TransX:
    case KDL::Joint::TransY:
    case KDL::Joint::TransZ:
        nj = KDL::Joint(j.getName(), F * j.JointOrigin(), F.M * j.JointAxis(), KDL::Joint::TransAxis);
        break;
    default: break;
    }
    return KDL::Segment(s.getName(), nj, F * s.getFrameToTip(), s.getInertia());
}

// Copy the subtree below `el` (its children, recursively) into `out` under the segment `hook`.
// Joints named in `lock` become Fixed (at q = 0). If `merge`, every segment with a Fixed joint is
// folded into the segment it hangs on (inertia added, children re-hooked), so the copy has one
// segment per rigid body, as roboest's model does.
inline void copy_children(KDL::SegmentMap::const_iterator el, const std::string &hook, const KDL::Frame &offset,
                          KDL::Tree &out, const std::set<std::string> *keep, bool merge,
                          KDL::RigidBodyInertia &hook_inertia)
{
    for (KDL::SegmentMap::const_iterator child : GetTreeElementChildren(el->second)) {
        KDL::Segment s = GetTreeElementSegment(child->second);
        if (movable(s) && keep && !keep->count(s.getJoint().getName()))
            s = locked_segment(s);
        s = rehooked_segment(s, offset);
        if (merge && !movable(s)) {
            // fold into the hook: children hang on the hook through s's (fixed) tip pose
            KDL::Frame F = s.getFrameToTip();
            hook_inertia = hook_inertia + F * s.getInertia();
            copy_children(child, hook, F, out, keep, merge, hook_inertia);
        } else {
            KDL::RigidBodyInertia own = s.getInertia();
            // add the segment first with a placeholder inertia; merged children add to `own`, and
            // the segment's final inertia is set below (KDL trees cannot be edited in place, so the
            // subtree is built into a scratch tree rooted at s and grafted afterwards)
            KDL::Tree sub(s.getName());
            copy_children(child, s.getName(), KDL::Frame::Identity(), sub, keep, merge, own);
            KDL::Segment fixed_inertia(s.getName(), s.getJoint(), s.getFrameToTip(), own);
            if (!out.addSegment(fixed_inertia, hook) || !out.addTree(sub, s.getName()))
                throw std::runtime_error("could not rebuild the KDL tree at segment " + s.getName());
        }
    }
}

// A copy of `tree` keeping the movable joints in `keep` (all if NULL; the others locked at 0),
// optionally with fixed segments merged. The root segment keeps its name (and, as in every KDL
// tree, carries no inertia).
inline KDL::Tree rebuild(const KDL::Tree &tree, const std::set<std::string> *keep, bool merge)
{
    KDL::SegmentMap::const_iterator root = tree.getRootSegment();
    KDL::Tree out(root->first);
    KDL::RigidBodyInertia root_inertia = KDL::RigidBodyInertia::Zero(); // dropped: fixed base
    copy_children(root, root->first, KDL::Frame::Identity(), out, keep, merge, root_inertia);
    return out;
}

// Floating-base emulation: a new tree rooted at a massless "world" segment, then three prismatic
// joints (x, y, z of the world), three revolute joints (about x, y, z of the moving frame: XYZ
// Euler angles), the last segment being the old root link with its inertia, then the old tree.
// Not a true free joint (a singular parametrization, 6 segments), but the same dynamics a KDL user
// has for a floating base: the base gets 6 more coordinates.
inline KDL::Tree floating(const KDL::Tree &fixed, const std::string &root, const KDL::RigidBodyInertia &root_inertia)
{
    KDL::Tree out("world");
    const char *names[6] = {"base_px", "base_py", "base_pz", "base_rx", "base_ry", "base_rz"};
    const KDL::Joint::JointType types[6] = {KDL::Joint::TransX, KDL::Joint::TransY, KDL::Joint::TransZ,
                                            KDL::Joint::RotX,   KDL::Joint::RotY,   KDL::Joint::RotZ};
    std::string hook = "world";
    for (int i = 0; i < 6; i++) {
        std::string seg = i == 5 ? root : std::string(names[i]) + "_link";
        KDL::RigidBodyInertia I = i == 5 ? root_inertia : KDL::RigidBodyInertia::Zero();
        out.addSegment(KDL::Segment(seg, KDL::Joint(names[i], types[i]), KDL::Frame::Identity(), I), hook);
        hook = seg;
    }
    // graft the old tree's content below the old root (same name, so the children hook on it)
    KDL::Tree copy = rebuild(fixed, nullptr, false);
    if (!out.addTree(copy, root))
        throw std::runtime_error("could not build the floating-base tree");
    return out;
}

} // namespace rbkdl

#endif
