// kdl_reference: inverse dynamics, mass matrix and gravity torques of a URDF robot computed by an
// independent library, Orocos KDL 1.5 (Debian liborocos-kdl-dev), the model built from the URDF by
// ROS kdl_parser through urdfdom (Debian libkdl-parser-dev). The roboest unit test
// tests/unit/test_dynamics_kdl.c compares roboest's dynamics with these figures.
//
// Usage:
//   kdl_reference URDF chain ROOT TIP STATES   KDL::Chain ROOT -> TIP (Tree::getChain):
//                                              ChainIdSolver_RNE torques, ChainDynParam
//                                              JntToGravity and JntToMass
//   kdl_reference URDF tree ROOT STATES        the whole KDL::Tree (ROOT must be the URDF root):
//                                              TreeIdSolver_RNE torques, gravity torques (RNE
//                                              with qd = qdd = 0) and the mass matrix built by n
//                                              RNE calls (KDL 1.5 has no tree mass-matrix solver)
// Fixed base at ROOT, gravity (0, 0, -9.81) m/s^2 in the ROOT frame, no external wrenches.
//
// STATES (text; '#' starts a comment line, blank lines are skipped):
//   joints NAME_1 ... NAME_n                  first line: the joints the rows refer to
//   q_1 .. q_n  qd_1 .. qd_n  qdd_1 .. qdd_n  then one line per state (3n numbers)
// In chain mode the names must be exactly the chain's movable joints (any order). In tree mode they
// are any subset of the tree's movable joints: the other joints are held at q = qd = qdd = 0, and
// results are given for the named joints only (so a model of a subset of the joints with the rest
// locked at zero, e.g. roboest's model loaded with a joint list, is the same physical system).
//
// Output (stdout, numbers printed with 17 significant digits, so they read back exactly):
//   # comment lines
//   mode chain|tree
//   joints n NAME_1 ... NAME_n                KDL's order (the chain's, or the tree's q order)
//   state K                                   for each input row K = 0, 1, ...
//   tau n v_1 .. v_n                          inverse dynamics at (q, qd, qdd)
//   gravity n v_1 .. v_n                      at (q, 0, 0)
//   mass n*n m_11 m_12 .. m_nn                row-major, chain: JntToMass
//   mass_by_rnea n*n m_11 .. m_nn             tree: column j = RNE(q, 0, e_j) without gravity
// All vectors follow the `joints` line's order. Exit status 0, or 1 with a message on stderr.
#include "kdl_common.hpp"

#include <kdl/chaindynparam.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/treeidsolver_recursive_newton_euler.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace
{

struct States {
    std::vector<std::string> joints;
    std::vector<std::vector<double>> rows; // 3n each: q, qd, qdd
};

States read_states(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error(path + ": " + std::strerror(errno));
    States st;
    std::string line;
    size_t lineno = 0;
    bool header = false;
    while (std::getline(in, line)) {
        lineno++;
        size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#')
            continue;
        std::istringstream ls(line);
        if (!header) {
            std::string word;
            ls >> word;
            if (word != "joints")
                throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected 'joints NAME...'");
            while (ls >> word)
                st.joints.push_back(word);
            if (st.joints.empty())
                throw std::runtime_error(path + ":" + std::to_string(lineno) + ": no joint names");
            header = true;
            continue;
        }
        std::vector<double> row;
        std::string tok;
        while (ls >> tok) {
            char *end = nullptr;
            errno = 0;
            double v = std::strtod(tok.c_str(), &end);
            if (end == tok.c_str() || *end != '\0' || errno == ERANGE)
                throw std::runtime_error(path + ":" + std::to_string(lineno) + ": bad number '" + tok + "'");
            row.push_back(v);
        }
        if (row.size() != 3 * st.joints.size())
            throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected " +
                                     std::to_string(3 * st.joints.size()) + " numbers, got " +
                                     std::to_string(row.size()));
        st.rows.push_back(row);
    }
    if (!header)
        throw std::runtime_error(path + ": no 'joints' line");
    return st;
}

void print_vec(const char *key, const std::vector<double> &v)
{
    std::printf("%s %zu", key, v.size());
    for (double x : v)
        std::printf(" %.17g", x);
    std::printf("\n");
}

void print_names(const std::vector<std::string> &names)
{
    std::printf("joints %zu", names.size());
    for (const auto &n : names)
        std::printf(" %s", n.c_str());
    std::printf("\n");
}

// For each output joint (KDL order), its column in the state rows.
std::vector<size_t> map_columns(const std::vector<std::string> &out_names, const std::vector<std::string> &in_names)
{
    std::vector<size_t> col;
    for (const auto &n : out_names) {
        size_t k = 0;
        while (k < in_names.size() && in_names[k] != n)
            k++;
        col.push_back(k);
    }
    return col;
}

void run_chain(const rbkdl::Loaded &m, const std::string &root, const std::string &tip, const States &st)
{
    KDL::Chain chain;
    if (!m.tree.getChain(root, tip, chain))
        throw std::runtime_error("no KDL chain from " + root + " to " + tip);
    std::vector<std::string> names = rbkdl::joint_names(chain);
    std::set<std::string> want(st.joints.begin(), st.joints.end());
    if (want.size() != st.joints.size() || want != std::set<std::string>(names.begin(), names.end()))
        throw std::runtime_error("the states' joints are not the movable joints of the chain " + root + " -> " + tip);
    const unsigned n = chain.getNrOfJoints();
    const KDL::Vector grav(0.0, 0.0, -9.81);
    KDL::ChainIdSolver_RNE rne(chain, grav);
    KDL::ChainDynParam dyn(chain, grav);
    std::vector<size_t> col = map_columns(names, st.joints);

    std::printf("# kdl_reference: Orocos KDL %s, ChainIdSolver_RNE + ChainDynParam, %u segments, fixed base\n", "1.5",
                chain.getNrOfSegments());
    std::printf("mode chain\n");
    print_names(names);
    KDL::JntArray q(n), qd(n), qdd(n), tau(n), g(n);
    KDL::JntSpaceInertiaMatrix M(n);
    KDL::Wrenches f_ext(chain.getNrOfSegments(), KDL::Wrench::Zero());
    for (size_t k = 0; k < st.rows.size(); k++) {
        const std::vector<double> &r = st.rows[k];
        for (unsigned i = 0; i < n; i++) {
            q(i) = r[col[i]];
            qd(i) = r[n + col[i]];
            qdd(i) = r[2 * n + col[i]];
        }
        if (rne.CartToJnt(q, qd, qdd, f_ext, tau) < 0 || dyn.JntToGravity(q, g) < 0 || dyn.JntToMass(q, M) < 0)
            throw std::runtime_error("a KDL chain solver failed on state " + std::to_string(k));
        std::printf("state %zu\n", k);
        std::vector<double> v(n), mm(n * n);
        for (unsigned i = 0; i < n; i++)
            v[i] = tau(i);
        print_vec("tau", v);
        for (unsigned i = 0; i < n; i++)
            v[i] = g(i);
        print_vec("gravity", v);
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < n; j++)
                mm[i * n + j] = M(i, j);
        print_vec("mass", mm);
    }
}

void run_tree(const rbkdl::Loaded &m, const std::string &root, const States &st)
{
    if (root != m.root)
        throw std::runtime_error("tree mode: ROOT must be the URDF root link " + m.root +
                                 " (KDL cannot re-root a tree)");
    std::map<std::string, unsigned> idx = rbkdl::joint_index(m.tree);
    std::vector<std::pair<unsigned, std::string>> sel;
    std::set<std::string> seen;
    for (const auto &name : st.joints) {
        auto it = idx.find(name);
        if (it == idx.end())
            throw std::runtime_error("tree mode: " + name + " is not a movable joint of the KDL tree");
        if (!seen.insert(name).second)
            throw std::runtime_error("tree mode: joint " + name + " named twice");
        sel.push_back({it->second, name});
    }
    std::sort(sel.begin(), sel.end());
    std::vector<std::string> names;
    for (const auto &s : sel)
        names.push_back(s.second);
    std::vector<size_t> col = map_columns(names, st.joints);
    const unsigned N = m.tree.getNrOfJoints(), n = (unsigned)names.size();
    KDL::TreeIdSolver_RNE rne(m.tree, KDL::Vector(0.0, 0.0, -9.81));
    KDL::TreeIdSolver_RNE rne0(m.tree, KDL::Vector::Zero());

    std::printf("# kdl_reference: Orocos KDL 1.5, TreeIdSolver_RNE, %u segments, %u movable joints (%u named, the "
                "rest held at 0), fixed base; mass_by_rnea: n RNE calls\n",
                m.tree.getNrOfSegments(), N, n);
    std::printf("mode tree\n");
    print_names(names);
    KDL::JntArray q(N), qd(N), qdd(N), zero(N), tau(N);
    KDL::WrenchMap f_ext;
    for (size_t k = 0; k < st.rows.size(); k++) {
        const std::vector<double> &r = st.rows[k];
        q.data.setZero(), qd.data.setZero(), qdd.data.setZero(), zero.data.setZero();
        for (unsigned i = 0; i < n; i++) {
            q(sel[i].first) = r[col[i]];
            qd(sel[i].first) = r[n + col[i]];
            qdd(sel[i].first) = r[2 * n + col[i]];
        }
        std::printf("state %zu\n", k);
        std::vector<double> v(n), mm(n * n);
        if (rne.CartToJnt(q, qd, qdd, f_ext, tau) < 0)
            throw std::runtime_error("TreeIdSolver_RNE failed on state " + std::to_string(k));
        for (unsigned i = 0; i < n; i++)
            v[i] = tau(sel[i].first);
        print_vec("tau", v);
        if (rne.CartToJnt(q, zero, zero, f_ext, tau) < 0)
            throw std::runtime_error("TreeIdSolver_RNE failed on state " + std::to_string(k));
        for (unsigned i = 0; i < n; i++)
            v[i] = tau(sel[i].first);
        print_vec("gravity", v);
        for (unsigned j = 0; j < n; j++) {
            KDL::JntArray e(N);
            e(sel[j].first) = 1.0;
            if (rne0.CartToJnt(q, zero, e, f_ext, tau) < 0)
                throw std::runtime_error("TreeIdSolver_RNE failed on state " + std::to_string(k));
            for (unsigned i = 0; i < n; i++)
                mm[i * n + j] = tau(sel[i].first);
        }
        print_vec("mass_by_rnea", mm);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const char *usage = "usage: kdl_reference URDF chain ROOT TIP STATES\n"
                        "       kdl_reference URDF tree ROOT STATES\n";
    try {
        if (argc == 6 && std::strcmp(argv[2], "chain") == 0) {
            rbkdl::Loaded m = rbkdl::load_urdf(argv[1]);
            run_chain(m, argv[3], argv[4], read_states(argv[5]));
        } else if (argc == 5 && std::strcmp(argv[2], "tree") == 0) {
            rbkdl::Loaded m = rbkdl::load_urdf(argv[1]);
            run_tree(m, argv[3], read_states(argv[4]));
        } else {
            std::fputs(usage, stderr);
            return 2;
        }
        if (std::fflush(stdout) != 0 || std::ferror(stdout))
            throw std::runtime_error("write error on stdout");
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "kdl_reference: %s\n", e.what());
        return 1;
    }
}
