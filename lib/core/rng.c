/* xoshiro256** (Blackman and Vigna, 2018) seeded by splitmix64, and Marsaglia's polar method. */
#include <math.h>

#include "roboest/core.h"

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void rb_rng_seed(rb_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++) { /* splitmix64: spreads any seed, including 0, over the state */
        uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        rng->s[i] = z ^ (z >> 31);
    }
    rng->has_spare = false;
    rng->spare = 0;
}

uint64_t rb_rng_next(rb_rng *rng)
{
    uint64_t *s = rng->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rb_rng_uniform(rb_rng *rng) { return (double)(rb_rng_next(rng) >> 11) * 0x1.0p-53; }

double rb_rng_normal(rb_rng *rng)
{
    if (rng->has_spare) {
        rng->has_spare = false;
        return rng->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * rb_rng_uniform(rng) - 1.0;
        v = 2.0 * rb_rng_uniform(rng) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    rng->spare = v * f;
    rng->has_spare = true;
    return u * f;
}
