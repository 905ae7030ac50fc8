"""A two-parameter logistic item response model fitted to a respondents × items matrix of right
and wrong answers: per item a difficulty and a discrimination with standard errors, per
respondent (a model) an ability. The chance of a right answer is `sigmoid(a * theta + d)`; the
difficulty is `b = -d / a`, the ability at which the chance is even. An optional known floor
(`floor + (1 - floor) * sigmoid(...)`) takes guessing into account; the item analysis leaves it
off, because a floor hides the very sign it looks for (a miskeyed item is answered right less
often than chance by able models, which a floored curve cannot show).

Fitted by joint maximum a posteriori (scipy's L-BFGS on the analytic gradient) with normal
priors: ability N(0, 1), intercept N(0, 2²), discrimination N(1, 0.75²). The discrimination
prior is a normal, not bounded below: a miskeyed item must be free to come out negative. The
IRT packages on the index bound it positive (mirt at 0.1, girth at 0.25) or pin versions that
Prefect's own dependencies exclude (py-irt: rich < 14, typer < 0.15, pandas < 3). Every
respondent answers many items, so the abilities are well determined and a joint fit is sound;
the item parameters rest on the few respondents there are, and their standard errors (each
item's Fisher information for its two parameters, the priors included, the abilities held at
their estimates) say how little that is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

PRIOR_THETA = 1.0  # ability ~ N(0, 1)
PRIOR_D = 2.0  # intercept ~ N(0, 2)
PRIOR_A = (1.0, 0.75)  # discrimination ~ N(1, 0.75²)
EPS = 1e-9


@dataclass(frozen=True)
class IrtFit:
    difficulty: np.ndarray  # per item
    difficulty_se: np.ndarray
    discrimination: np.ndarray
    discrimination_se: np.ndarray
    intercept: np.ndarray  # the logit at ability 0: -discrimination × difficulty
    ability: np.ndarray  # per model
    ability_se: np.ndarray
    converged: bool
    iterations: int


def _parts(
    theta: np.ndarray, a: np.ndarray, d: np.ndarray, floor: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(chance of a right answer, its derivative by the logit) for every model and item; the
    logit is `a * theta + d`."""
    z = a[None, :] * theta[:, None] + d[None, :]
    s = 0.5 * (1.0 + np.tanh(0.5 * z))  # the sigmoid, without overflow
    p = floor[None, :] + (1.0 - floor[None, :]) * s
    return np.clip(p, EPS, 1 - EPS), (1.0 - floor[None, :]) * s * (1.0 - s)


def _logit(share: np.ndarray) -> np.ndarray:
    share = np.clip(share, 0.02, 0.98)
    return np.log(share / (1 - share))


def _start(y: np.ndarray, seen: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Abilities from each model's share right, intercepts from each item's, slopes at 1."""
    per_model = (y * seen).sum(1) / np.maximum(seen.sum(1), 1)
    per_item = (y * seen).sum(0) / np.maximum(seen.sum(0), 1)
    theta = _logit(per_model)
    theta = (theta - theta.mean()) / (theta.std() or 1.0)
    d = _logit((per_item - floor) / np.maximum(1 - floor, EPS))
    return np.concatenate([theta, np.ones(y.shape[1]), d])


def fit_2pl(correct: np.ndarray, floor: np.ndarray | None = None, max_iter: int = 3000) -> IrtFit:
    """Fit the model to `correct` (models × items; 1 right, 0 wrong, NaN not asked); `floor`:
    each item's chance of a right answer by guessing (none by default: the plain 2PL)."""
    correct = np.asarray(correct, dtype=float)
    m, n = correct.shape
    floor = np.zeros(n) if floor is None else np.asarray(floor, dtype=float)
    seen = ~np.isnan(correct)
    y = np.where(seen, correct, 0.0)
    mu_a, sd_a = PRIOR_A

    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return x[:m], x[m : m + n], x[m + n :]

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        theta, a, d = split(x)
        p, dp = _parts(theta, a, d, floor)
        loglik = np.where(seen, y * np.log(p) + (1 - y) * np.log(1 - p), 0.0).sum()
        prior = (
            (theta**2).sum() / (2 * PRIOR_THETA**2)
            + ((a - mu_a) ** 2).sum() / (2 * sd_a**2)
            + (d**2).sum() / (2 * PRIOR_D**2)
        )
        w = np.where(seen, (y - p) / (p * (1 - p)) * dp, 0.0)  # d loglik / d logit
        grad = np.concatenate(
            [
                (w * a[None, :]).sum(1) - theta / PRIOR_THETA**2,
                (w * theta[:, None]).sum(0) - (a - mu_a) / sd_a**2,
                w.sum(0) - d / PRIOR_D**2,
            ]
        )
        return -(loglik - prior), -grad

    result = minimize(
        objective,
        _start(y, seen, floor),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "maxfun": 4 * max_iter},
    )
    theta, a, d = split(result.x)
    p, dp = _parts(theta, a, d, floor)
    info = np.where(seen, dp**2 / (p * (1 - p)), 0.0)  # Fisher information per logit
    # Each item's 2 × 2 information for (a, d), the abilities held at their estimates.
    i_aa = (info * theta[:, None] ** 2).sum(0) + 1 / sd_a**2
    i_dd = info.sum(0) + 1 / PRIOR_D**2
    i_ad = (info * theta[:, None]).sum(0)
    det = np.maximum(i_aa * i_dd - i_ad**2, EPS)
    var_a, var_d, cov_ad = i_dd / det, i_aa / det, -i_ad / det
    # Difficulty b = -d / a, the ability at the curve's midpoint; its error by the delta method.
    safe = np.where(np.abs(a) < EPS, EPS, a)
    b = -d / safe
    var_b = (var_d + b**2 * var_a + 2 * b * cov_ad) / safe**2
    i_theta = (info * a[None, :] ** 2).sum(1) + 1 / PRIOR_THETA**2
    return IrtFit(
        difficulty=b,
        difficulty_se=np.sqrt(np.maximum(var_b, 0.0)),
        discrimination=a,
        discrimination_se=np.sqrt(var_a),
        intercept=d,
        ability=theta,
        ability_se=np.sqrt(1 / i_theta),
        converged=bool(result.success),
        iterations=int(result.nit),
    )
