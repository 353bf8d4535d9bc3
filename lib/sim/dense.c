/* lib/sim: the small dense linear algebra of the engine and its IK (sim_internal.h): Cholesky, rotation log, pose
 * error. */
#include <math.h>

#include "roboest/sim.h"

#include "sim_internal.h"

/* ---- small dense linear algebra (row-major, n <= a few dozen) ------------------------------------------ */

/* In-place Cholesky A = L L^T (lower triangle of A receives L, its diagonal as 1 / L_jj); false if not positive
 * definite. */
bool sim_chol(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double *Aj = A + j * n, d = Aj[j];
        for (size_t k = 0; k < j; k++)
            d -= Aj[k] * Aj[k];
        if (!(d > 0.0))
            return false;
        double dinv = 1.0 / sqrt(d);
        Aj[j] = dinv;
        for (size_t i = j + 1; i < n; i++) {
            double *Ai = A + i * n, s = Ai[j];
            for (size_t k = 0; k < j; k++)
                s -= Ai[k] * Aj[k];
            Ai[j] = s * dinv;
        }
    }
    return true;
}

void sim_chol_solve(const double *L, size_t n, double *x)
{
    for (size_t i = 0; i < n; i++) {
        double s = x[i];
        for (size_t k = 0; k < i; k++)
            s -= L[i * n + k] * x[k];
        x[i] = s * L[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double xi = x[i] * L[i * n + i];
        x[i] = xi;
        for (size_t k = 0; k < i; k++) /* column-oriented: row i of L carries x_i to the earlier unknowns */
            x[k] -= L[i * n + k] * xi;
    }
}

/* log of a rotation matrix as a rotation vector (angle < pi). */
void sim_rot_log(const double R[9], double w[3])
{
    double c = 0.5 * (R[0] + R[4] + R[8] - 1.0);
    c = c > 1.0 ? 1.0 : c < -1.0 ? -1.0 : c;
    double th = acos(c), s = sin(th), k = th < 1e-8 ? 0.5 + th * th / 12.0 : 0.5 * th / s;
    w[0] = k * (R[7] - R[5]), w[1] = k * (R[2] - R[6]), w[2] = k * (R[3] - R[1]);
}

/* e = [p - p_ref; log(R R_ref^T)] */
void sim_pose_error(const rb_xform *X, const rb_xform *ref, double e[6])
{
    double RRt[9];
    for (int i = 0; i < 3; i++) {
        e[i] = X->p[i] - ref->p[i];
        for (int j = 0; j < 3; j++)
            RRt[3 * i + j] =
                X->R[3 * i] * ref->R[3 * j] + X->R[3 * i + 1] * ref->R[3 * j + 1] + X->R[3 * i + 2] * ref->R[3 * j + 2];
    }
    sim_rot_log(RRt, e + 3);
}
