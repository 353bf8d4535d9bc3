// KDL side of the dynamics benchmark (scripts/bench-dynamics.sh runs it next to bench_dynamics.c):
// per-call times of Orocos KDL 1.5's inverse dynamics and mass matrix on ergoCub, the model built
// from the URDF by ROS kdl_parser. Never a timed test: it prints figures.
//
// Cases (the same as bench_dynamics.c):
//   leg6     right leg root_link -> r_sole, 6 DoF, fixed base: KDL::Chain (Tree::getChain),
//            ChainIdSolver_RNE and ChainDynParam::JntToMass
//   fixed32  32 DoF, fixed base at root_link (JOINTS32 below; the other 24 movable joints, hands and
//            fingers, locked at 0): TreeIdSolver_RNE; KDL 1.5 has no tree mass-matrix solver, so the
//            mass matrix is built by n RNE calls (column j = RNE(q, 0, e_j), no gravity), reported as
//            algorithm "mass_by_rnea"
//   float38  the same 32 joints plus a floating base, emulated in KDL by 3 prismatic + 3 revolute
//            virtual joints (x, y, z, then XYZ Euler angles) between a massless world root and
//            root_link (KDL has no free joint): 38 coordinates; RNE and mass_by_rnea as above
// Variants:
//   kdl         the tree as kdl_parser builds it: one segment per URDF link, the fixed ones (frames,
//               sensor halves, locked joints) included: this is what a KDL user gets
//   kdl_merged  the same physical system with every fixed segment folded into its parent (one
//               segment per rigid body, as in roboest's model): the fastest KDL can do
// The rebuilt trees are checked against the plain ones (same torques to 1e-9) before timing.
//
// Timing: random states precomputed (joint limits respected where the URDF gives them), a warm-up,
// then BATCHES batches of many calls each (about 10 ms a batch), cycling through the states; the
// figure is the median over batches of the time per call.
//
// Usage: bench_kdl URDF [BATCHES]   (default 31)
// Output, one line per measurement:  CASE ALGORITHM VARIANT MICROSECONDS_PER_CALL
#include "kdl_common.hpp"

#include <kdl/chaindynparam.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/treeidsolver_recursive_newton_euler.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

namespace
{

const char *const JOINTS_LEG[] = {"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"};

// legs 12, torso 2 (torso_pitch is a fixed joint in ergoCubSN000.urdf), arms 2 x 7, neck 3, and the
// head camera tilt to make 32
const char *const JOINTS32[] = {
    "r_hip_pitch", "r_hip_roll",   "r_hip_yaw",        "r_knee",           "r_ankle_pitch",   "r_ankle_roll",
    "l_hip_pitch", "l_hip_roll",   "l_hip_yaw",        "l_knee",           "l_ankle_pitch",   "l_ankle_roll",
    "torso_roll",  "torso_yaw",    "r_shoulder_pitch", "r_shoulder_roll",  "r_shoulder_yaw",  "r_elbow",
    "r_wrist_yaw", "r_wrist_roll", "r_wrist_pitch",    "l_shoulder_pitch", "l_shoulder_roll", "l_shoulder_yaw",
    "l_elbow",     "l_wrist_yaw",  "l_wrist_roll",     "l_wrist_pitch",    "neck_pitch",      "neck_roll",
    "neck_yaw",    "camera_tilt"};

enum { N_STATES = 256 };

// splitmix64: small, seeded, the same sequence everywhere
struct Rng {
    uint64_t s;
    double uniform(double lo, double hi)
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
    }
};

struct State {
    KDL::JntArray q, qd, qdd;
};

std::vector<State> make_states(const std::vector<std::string> &names, const rbkdl::Loaded &m, uint64_t seed)
{
    Rng rng{seed};
    std::vector<State> out(N_STATES);
    const unsigned n = (unsigned)names.size();
    for (State &s : out) {
        s.q.resize(n), s.qd.resize(n), s.qdd.resize(n);
        for (unsigned i = 0; i < n; i++) {
            double lo = -M_PI, hi = M_PI;
            auto it = m.limits.find(names[i]);
            if (it != m.limits.end() && it->second.first < it->second.second)
                lo = it->second.first, hi = it->second.second;
            if (names[i].rfind("base_p", 0) == 0)
                lo = -1.0, hi = 1.0; // virtual floating-base translations
            s.q(i) = rng.uniform(lo, hi);
            s.qd(i) = rng.uniform(-3.0, 3.0);
            s.qdd(i) = rng.uniform(-10.0, 10.0);
        }
    }
    return out;
}

volatile double sink;

// Median over batches of the time per call of fn(state k).
double time_per_call_us(const std::function<double(const State &)> &fn, const std::vector<State> &states, int batches)
{
    using clock = std::chrono::steady_clock;
    // warm-up, and calibrate the calls per batch to about 10 ms
    size_t k = 0;
    long calls = 0;
    double acc = 0.0;
    auto t0 = clock::now();
    while (std::chrono::duration<double>(clock::now() - t0).count() < 0.2) {
        for (int i = 0; i < 16; i++)
            acc += fn(states[k++ % states.size()]);
        calls += 16;
    }
    double per_call = std::chrono::duration<double>(clock::now() - t0).count() / (double)calls;
    long reps = std::max(1L, (long)(0.01 / per_call));
    std::vector<double> t(batches);
    for (int b = 0; b < batches; b++) {
        auto start = clock::now();
        for (long i = 0; i < reps; i++)
            acc += fn(states[k++ % states.size()]);
        t[b] = std::chrono::duration<double, std::micro>(clock::now() - start).count() / (double)reps;
    }
    sink = acc;
    std::nth_element(t.begin(), t.begin() + batches / 2, t.end());
    return t[batches / 2];
}

struct TreeCase {
    KDL::Tree tree;
    std::vector<std::string> names; // q order
};

// RNE on a tree plus the mass matrix by n RNE calls.
struct TreeDyn {
    const KDL::Tree &tree;
    unsigned n;
    KDL::TreeIdSolver_RNE rne, rne0;
    KDL::JntArray tau, zero, e;
    KDL::WrenchMap f_ext;
    std::vector<double> M;
    explicit TreeDyn(const KDL::Tree &t)
        : tree(t), n(t.getNrOfJoints()), rne(t, KDL::Vector(0, 0, -9.81)), rne0(t, KDL::Vector::Zero()), tau(n),
          zero(n), e(n), M((size_t)n * n)
    {
    }
    double rnea(const State &s)
    {
        rne.CartToJnt(s.q, s.qd, s.qdd, f_ext, tau);
        return tau(0);
    }
    double mass(const State &s)
    {
        for (unsigned j = 0; j < n; j++) {
            e(j) = 1.0;
            rne0.CartToJnt(s.q, zero, e, f_ext, tau);
            e(j) = 0.0;
            for (unsigned i = 0; i < n; i++)
                M[(size_t)i * n + j] = tau(i);
        }
        return M[0];
    }
};

// States of `names` reordered to another tree's q order (same joint names).
std::vector<State> reorder(const std::vector<State> &st, const std::vector<std::string> &from, const KDL::Tree &to)
{
    std::map<std::string, unsigned> idx = rbkdl::joint_index(to);
    std::vector<State> out(st.size());
    for (size_t k = 0; k < st.size(); k++) {
        unsigned n = to.getNrOfJoints();
        out[k].q.resize(n), out[k].qd.resize(n), out[k].qdd.resize(n);
        for (unsigned i = 0; i < from.size(); i++) {
            unsigned j = idx.at(from[i]);
            out[k].q(j) = st[k].q(i), out[k].qd(j) = st[k].qd(i), out[k].qdd(j) = st[k].qdd(i);
        }
    }
    return out;
}

// Max |tau_a - tau_b| over the first states, b's joints mapped by name.
double check_same(const KDL::Tree &a, const KDL::Tree &b, const std::vector<State> &sa)
{
    std::vector<std::string> na = rbkdl::joint_names(a);
    std::vector<State> sb = reorder(sa, na, b);
    TreeDyn da(a), db(b);
    std::map<std::string, unsigned> ib = rbkdl::joint_index(b);
    double worst = 0.0;
    for (size_t k = 0; k < 8; k++) {
        da.rnea(sa[k]), db.rnea(sb[k]);
        for (unsigned i = 0; i < na.size(); i++)
            worst = std::max(worst, std::fabs(da.tau(i) - db.tau(ib.at(na[i]))));
    }
    return worst;
}

void report(const char *c, const char *alg, const char *variant, double us)
{
    std::printf("%s %s %s %.4f\n", c, alg, variant, us);
    std::fflush(stdout);
}

void bench_tree(const char *name, const KDL::Tree &tree, const char *variant, const std::vector<State> &states,
                int batches)
{
    TreeDyn d(tree);
    report(name, "rnea", variant, time_per_call_us([&](const State &s) { return d.rnea(s); }, states, batches));
    report(name, "mass_by_rnea", variant, time_per_call_us([&](const State &s) { return d.mass(s); }, states, batches));
}

void bench_chain(const KDL::Chain &chain, const char *variant, const std::vector<State> &states, int batches)
{
    const unsigned n = chain.getNrOfJoints();
    KDL::ChainIdSolver_RNE rne(chain, KDL::Vector(0, 0, -9.81));
    KDL::ChainDynParam dyn(chain, KDL::Vector(0, 0, -9.81));
    KDL::JntArray tau(n);
    KDL::JntSpaceInertiaMatrix M(n);
    KDL::Wrenches f_ext(chain.getNrOfSegments(), KDL::Wrench::Zero());
    report("leg6", "rnea", variant,
           time_per_call_us(
               [&](const State &s) {
                   rne.CartToJnt(s.q, s.qd, s.qdd, f_ext, tau);
                   return tau(0);
               },
               states, batches));
    report("leg6", "mass", variant,
           time_per_call_us(
               [&](const State &s) {
                   dyn.JntToMass(s.q, M);
                   return M(0, 0);
               },
               states, batches));
}

void check(const char *what, double err)
{
    std::fprintf(stderr, "bench_kdl: %s: max |tau difference| %.3g N m\n", what, err);
    if (!(err < 1e-9))
        throw std::runtime_error(std::string(what) + ": rebuilt KDL tree disagrees with the original");
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: bench_kdl URDF [BATCHES]\n");
        return 2;
    }
    int batches = argc == 3 ? std::atoi(argv[2]) : 31;
    if (batches < 1) {
        std::fprintf(stderr, "bench_kdl: BATCHES must be positive\n");
        return 2;
    }
    try {
        rbkdl::Loaded m = rbkdl::load_urdf(argv[1]);
        std::set<std::string> keep32(std::begin(JOINTS32), std::end(JOINTS32));
        for (const char *j : JOINTS32)
            if (!rbkdl::joint_index(m.tree).count(j))
                throw std::runtime_error(std::string("no movable joint ") + j);

        // (a) the right leg chain, as kdl_parser's tree gives it, and merged
        KDL::Chain leg;
        if (!m.tree.getChain(m.root, "r_sole", leg))
            throw std::runtime_error("no chain " + m.root + " -> r_sole");
        KDL::Tree leg_tree(m.root);
        leg_tree.addChain(leg, m.root);
        KDL::Tree leg_merged_tree = rbkdl::rebuild(leg_tree, nullptr, true);
        KDL::Chain leg_merged;
        std::string tip;
        for (const auto &kv : leg_merged_tree.getSegments())
            if (GetTreeElementSegment(kv.second).getJoint().getName() == "r_ankle_roll")
                tip = kv.first;
        if (!leg_merged_tree.getChain(m.root, tip, leg_merged))
            throw std::runtime_error("no merged leg chain");
        std::vector<std::string> leg_names = rbkdl::joint_names(leg);
        for (unsigned i = 0; i < 6; i++)
            if (leg_names[i] != JOINTS_LEG[i] || rbkdl::joint_names(leg_merged)[i] != JOINTS_LEG[i])
                throw std::runtime_error("unexpected joint order in the leg chain");
        std::vector<State> leg_states = make_states(leg_names, m, 1);
        check("leg6 merged vs plain",
              check_same(leg_tree, leg_merged_tree, make_states(rbkdl::joint_names(leg_tree), m, 1)));

        // (b) 32 DoF fixed base: the other joints locked (Fixed segments), and merged
        KDL::Tree t32 = rbkdl::rebuild(m.tree, &keep32, false);
        KDL::Tree t32m = rbkdl::rebuild(m.tree, &keep32, true);
        std::vector<State> s32 = make_states(rbkdl::joint_names(t32), m, 2);
        std::vector<State> s32m = reorder(s32, rbkdl::joint_names(t32), t32m);
        check("fixed32 locked vs full tree with the rest at 0", check_same(t32, m.tree, s32));
        check("fixed32 merged vs plain", check_same(t32, t32m, s32));

        // (c) 38 DoF: virtual 6-joint floating base
        KDL::Tree f38 = rbkdl::floating(t32, m.root, m.root_inertia);
        KDL::Tree f38m = rbkdl::rebuild(f38, nullptr, true);
        std::vector<State> s38 = make_states(rbkdl::joint_names(f38), m, 3);
        std::vector<State> s38m = reorder(s38, rbkdl::joint_names(f38), f38m);
        check("float38 merged vs plain", check_same(f38, f38m, s38));

        std::printf("# bench_kdl: Orocos KDL 1.5 via kdl_parser, %s; segments: leg6 %u (merged %u), fixed32 %u "
                    "(merged %u), float38 %u (merged %u); microseconds per call, median of %d batches\n",
                    argv[1], leg.getNrOfSegments(), leg_merged.getNrOfSegments(), t32.getNrOfSegments(),
                    t32m.getNrOfSegments(), f38.getNrOfSegments(), f38m.getNrOfSegments(), batches);
        if (t32.getNrOfJoints() != 32 || f38.getNrOfJoints() != 38)
            throw std::runtime_error("unexpected number of joints");
        bench_chain(leg, "kdl", leg_states, batches);
        bench_chain(leg_merged, "kdl_merged", leg_states, batches);
        bench_tree("fixed32", t32, "kdl", s32, batches);
        bench_tree("fixed32", t32m, "kdl_merged", s32m, batches);
        bench_tree("float38", f38, "kdl", s38, batches);
        bench_tree("float38", f38m, "kdl_merged", s38m, batches);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_kdl: %s\n", e.what());
        return 1;
    }
    return 0;
}
