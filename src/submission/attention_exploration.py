"""The written part, made executable: attention exploration (question 3) and
the attention cost of the two models (question 1g).

Read ``docs/written_questions.md`` first; it states every question. Here you
turn your answers into code so that ``python grader.py 3a`` (and 3b ... 3e,
1g) can check them on random instances.

Notation used throughout. One attention layer has keys k_1, ..., k_n, values
v_1, ..., v_n and a query q. Its output is

    c = sum_i alpha_i v_i,   alpha_i = exp(k_i^T q) / sum_j exp(k_j^T q).

The values never enter your constructions: c is close to a target mixture of
values exactly when the weights alpha are close to the target weights. So the
functions below return queries (or matrices), and the checks look at alpha.

Conventions.
  * Tensors are float torch tensors (the checks pass float64). A set of n
    vectors in R^d is an (n, d) tensor whose row i is the i-th vector; a single
    vector is a 1-D tensor of shape (d,).
  * ``scale`` (beta >= 1 in the docs) says how sharp the attention must be. A
    query must give every key it should attend to a logit that is larger than
    the logit of every other key by at least ``scale``; when it should attend
    to two keys equally, their logits must be equal. Such a margin puts each
    attention weight within n * exp(-scale) of its target, which is what the
    checks test.
  * Work with the arguments only (no global state, no randomness).
"""

import torch


def copy_query(keys, j, scale):
    """3a. A query that copies value j: c ~= v_j.

    Args:
        keys: (n, d) tensor of n distinct unit-norm keys (||k_i|| = 1). They
            are NOT orthogonal in general, and n may exceed d.
        j: int, index of the key to attend to.
        scale: float >= 1, the required logit margin.

    Returns:
        q: (d,) tensor with  k_j^T q - k_i^T q >= scale  for every i != j.
        Then alpha_j >= 1 - (n - 1) exp(-scale), so c ~= v_j.
    """
    q = None
    ### TODO: [part 3a]
    ### START CODE HERE ###
    k_j = keys[j]
    others = torch.cat([keys[:j], keys[j + 1:]])
    if len(others) == 0:
        q = scale * k_j
    else:
        closest = (others @ k_j).max()  # unit keys: the gap is t (1 - k_i^T k_j), least for the closest k_i
        q = (scale / (1.0 - closest)) * k_j
    ### END CODE HERE ###
    return q


def average_query(keys, a, b, scale):
    """3b. A query that averages two values: c ~= (v_a + v_b) / 2.

    Args:
        keys: (n, d) tensor of orthonormal keys (k_i^T k_j = 1 if i == j,
            else 0), n <= d.
        a, b: ints, a != b, the two keys to attend to.
        scale: float >= 1, the required logit margin.

    Returns:
        q: (d,) tensor with  k_a^T q = k_b^T q  and
        k_a^T q - k_i^T q >= scale  for every i not in {a, b}.
    """
    q = None
    ### TODO: [part 3b]
    ### START CODE HERE ###
    q = scale * (keys[a] + keys[b])
    ### END CODE HERE ###
    return q


def gaussian_average_query(means, a, b, scale):
    """3c(i). One head, random keys: c ~= (v_a + v_b) / 2.

    The keys are random, k_i ~ N(mu_i, sigma^2 I) with sigma^2 vanishingly small;
    you only know their means.

    Args:
        means: (n, d) tensor of orthonormal means mu_1, ..., mu_n, n <= d.
        a, b: ints, a != b.
        scale: float >= 1, the required logit margin.

    Returns:
        q: (d,) tensor, built from the means, that meets the 3b requirement
        for the mean keys:  mu_a^T q = mu_b^T q  and
        mu_a^T q - mu_i^T q >= scale  for every i not in {a, b}.
        The check also draws keys with a tiny sigma^2 and expects the same
        weights up to the (tiny) noise.
    """
    q = None
    ### TODO: [part 3c]
    ### START CODE HERE ###
    q = scale * (means[a] + means[b])
    ### END CODE HERE ###
    return q


def two_head_queries(means, a, b, scale):
    """3d(i). Two heads whose average output is c ~= (v_a + v_b) / 2.

    Head h uses query q_h and outputs c_h; the layer outputs
    c = (c_1 + c_2) / 2. Keys are as in 3c(i): k_i ~ N(mu_i, sigma^2 I), sigma^2
    vanishingly small.

    The two heads must really differ: q_1 = q_2 is forbidden, and so is any
    pair that makes both heads attend alike (for instance q_2 = q_1 plus a
    tiny change, or plus a direction no mean points to). The check requires
    the two heads' attention weights on the mean keys to differ by at least
    1/2 in total variation, (1/2) sum_i |alpha1_i - alpha2_i| >= 1/2.

    Args:
        means: (n, d) tensor of orthonormal means, n <= d.
        a, b: ints, a != b.
        scale: float >= 1. Within each head, the keys that head should attend
            to must beat every other key by a logit margin of at least scale
            (and tie with each other if there are two).

    Returns:
        (q1, q2): a tuple of two (d,) tensors such that, on the mean keys,
        the averaged weights (alpha1 + alpha2) / 2 are within n * exp(-scale)
        of 1/2 on a, 1/2 on b and 0 elsewhere.
        The check 3d-2 then perturbs k_a as in 3d(ii) and expects c to stay
        close to (v_a + v_b) / 2 far more often than a single head does.
    """
    queries = None
    ### TODO: [part 3d]
    ### START CODE HERE ###
    queries = (scale * means[a], scale * means[b])
    ### END CODE HERE ###
    return queries


def kqv_matrices(u_a, u_b, u_c, u_d):
    """3e(ii). Key, query and value matrices for the three-token example.

    u_a, u_b, u_c, u_d are mutually orthogonal vectors in R^d, each of norm
    beta (large; the check uses beta >= 10). The inputs are
        x_1 = u_d + u_b,   x_2 = u_a,   x_3 = u_c + u_b,
    and token i uses k_i = K x_i, q_i = Q x_i, v_i = V x_i (matrices act on
    column vectors). Output i is c_i = sum_j alpha_ij v_j with
    alpha_i = softmax_j(k_j^T q_i).

    Args:
        u_a, u_b, u_c, u_d: (d,) tensors as above (d >= 4).

    Returns:
        (K, Q, V): K and Q of shape (p, d) for some p, V of shape (d, d), such
        that for every such u's
            ||c_2 - u_b|| <= 1e-3 * beta   and
            ||c_1 - (u_b - u_c)|| <= 1e-3 * beta.
        Your matrices may depend on the u's (and so on beta = ||u_a||), but
        must work for all three tokens at once, not only for x_2.
    """
    matrices = None
    ### TODO: [part 3e]
    ### START CODE HERE ###
    beta_sq = u_a @ u_a
    d = u_a.shape[0]
    K = torch.eye(d, dtype=u_a.dtype)
    Q = (torch.outer(u_d, u_a) + torch.outer(u_c, u_d)) / beta_sq  # q_2 = u_d finds k_1, q_1 = u_c finds k_3
    V = (torch.outer(u_b, u_b) - torch.outer(u_c, u_c)) / beta_sq  # v_1 = u_b, v_3 = u_b - u_c
    matrices = (K, Q, V)
    ### END CODE HERE ###
    return matrices


def vanilla_attention_cost(L, ell, m):
    """1g. Attention cost of the vanilla model, as an exact count.

    Counting convention (use it for both models): count, for one sequence and
    one attention head, the query-key scores the attention layers compute,
    i.e. the entries of every score matrix Q K^T. Every query is scored
    against every key of its layer; the causal mask is applied after scoring,
    so masked entries count too. Projections, softmax, the weighted sum of
    values and the feed-forward parts are not counted (the weighted sum costs
    the same as the scores, a constant factor).

    The vanilla model has L self-attention layers, each over the ell
    positions of the input (ell is the block size).

    Args:
        L: int >= 2, number of layers. ell: int, input length.
        m: int, the Perceiver bottleneck length (unused here; kept so both
            cost functions take the same arguments).

    Returns:
        int: the number of query-key scores.
    """
    cost = None
    ### TODO: [part 1g]
    ### START CODE HERE ###
    cost = L * ell * ell
    ### END CODE HERE ###
    return cost


def perceiver_attention_cost(L, ell, m):
    """1g. Attention cost of the Perceiver model, as an exact count.

    Same counting convention as ``vanilla_attention_cost``. The Perceiver
    model has L layers too:
      * layer 1 (down-projection) is cross-attention whose m queries are the
        learned basis C and whose keys come from the ell input positions;
      * layers 2 .. L-1 are self-attention over the m bottleneck positions;
      * layer L (up-projection) is cross-attention whose ell queries come from
        the input and whose keys come from the m bottleneck positions.

    Args:
        L: int >= 2. ell: int, input length. m: int, bottleneck length.

    Returns:
        int: the number of query-key scores.
    """
    cost = None
    ### TODO: [part 1g]
    ### START CODE HERE ###
    cost = m * ell + (L - 2) * m * m + ell * m
    ### END CODE HERE ###
    return cost
