//! The device timeline of every rank of a generated training job, simulated in lock step:
//! per step, the forward pass of every microbatch through the pipeline stages, then the backward
//! pass in reverse stage order (a GPipe schedule), then the data-parallel gradient allreduce and
//! the optimizer. A collective ends at the same instant on every member of its group (the last
//! member's arrival plus its transfer time), so the members that arrived early wait inside it;
//! stages hand activations (and gradients back) over HCCL send / receive pairs that end
//! together. A slow rank or stage makes its peers wait exactly where a real job's would.

use super::super::rng::Rng;
use super::topology::{JobGroup, Topology};

/// Layers per pipeline stage.
pub const LAYERS: u32 = 2;
/// Tokens of one microbatch on one rank (the experts' mean load).
pub const MICROBATCH_TOKENS: i64 = 4096;

/// One compute task on the rank's compute stream.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: &'static str,
    pub task_type: &'static str,
    pub start: i64,
    pub dur: i64,
    /// Tokens routed to this rank's experts (GroupedMatmul only; 0 otherwise).
    pub tokens: i64,
    /// Index of the launch (host call) that queued it in [`RankTimeline::launches`].
    pub launch: u32,
}

/// What a communication op is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    AllReduce,
    AllToAll,
    Send,
    Receive,
}

impl OpKind {
    /// HCCL's op name stem (`hcom_allReduce_`, ...).
    pub fn stem(self) -> &'static str {
        match self {
            OpKind::AllReduce => "hcom_allReduce_",
            OpKind::AllToAll => "hcom_alltoall_",
            OpKind::Send => "hcom_send_",
            OpKind::Receive => "hcom_receive_",
        }
    }
}

/// One HCCL op of one rank: it spans from the rank's arrival to the group's common end.
#[derive(Debug, Clone)]
pub struct CommOp {
    pub kind: OpKind,
    /// Index into the job's groups.
    pub group: usize,
    pub start: i64,
    pub end: i64,
}

/// One step of one rank: the host's ProfilerStep window and the device work inside it.
#[derive(Debug, Clone, Copy)]
pub struct StepSpan {
    pub number: i64,
    pub host_start: i64,
    pub end: i64,
}

#[derive(Debug, Clone, Default)]
pub struct RankTimeline {
    pub tasks: Vec<Task>,
    pub ops: Vec<CommOp>,
    pub steps: Vec<StepSpan>,
    /// Host launch calls: (host start, first device task start).
    pub launches: Vec<(i64, i64)>,
}

/// What slows whom.
#[derive(Debug, Clone, Default)]
pub struct Slowness {
    /// (rank, percent of normal compute time).
    pub rank: Option<(u32, u32)>,
    /// (stage, percent of normal compute time).
    pub stage: Option<(u32, u32)>,
    /// The expert load of EP index 0 of each EP group, as a multiple of the others' (1.0: balanced).
    pub expert_skew: f64,
}

struct Sim<'a> {
    t: Topology,
    groups: &'a [JobGroup],
    /// Per kind of group, each rank's group index (`KINDS`).
    member: Vec<[Option<usize>; 4]>,
    ready: Vec<i64>,
    out: Vec<RankTimeline>,
    pct: Vec<i64>,
    tokens_weight: Vec<f64>,
    rng: Rng,
    /// Per rank, the time its last forward (or backward) output was ready to send.
    sent: Vec<i64>,
}

const KINDS: [&str; 4] = ["tp", "dp", "exp", "mp"];

/// The timelines of every rank for `steps` steps of `microbatches` microbatches.
pub fn simulate(
    t: Topology,
    groups: &[JobGroup],
    (steps, microbatches): (u32, u32),
    slow: &Slowness,
    seed: u64,
    t0: i64,
) -> Vec<RankTimeline> {
    let world = t.world() as usize;
    let mut member = vec![[None; 4]; world];
    for (g, grp) in groups.iter().enumerate() {
        if let Some(k) = KINDS.iter().position(|k| *k == grp.name) {
            for &r in &grp.ranks {
                member[r as usize][k] = Some(g);
            }
        }
    }
    let pct = (0..world as u32)
        .map(|r| {
            let mut p = 100i64;
            if let Some((_, sp)) = slow.rank.filter(|s| s.0 == r) {
                p = sp as i64;
            }
            if let Some((_, sp)) = slow.stage.filter(|s| s.0 == t.stage(r)) {
                p = p * sp as i64 / 100;
            }
            p
        })
        .collect();
    let tokens_weight = (0..world as u32)
        .map(|r| {
            if t.ep > 1 && t.ep_index(r) == 0 {
                slow.expert_skew.max(0.01)
            } else {
                1.0
            }
        })
        .collect();
    let mut s = Sim {
        t,
        groups,
        member,
        ready: vec![t0; world],
        out: vec![RankTimeline::default(); world],
        pct,
        tokens_weight,
        rng: Rng::new(seed ^ 0x10b),
        sent: vec![t0; world],
    };
    for n in 0..steps {
        s.step(n as i64 + 1, microbatches);
    }
    s.out
}

/// (name, task type, min µs, max µs) of one layer's attention block, forward.
const ATTENTION: &[(&str, &str, i64, i64)] = &[
    ("AddRmsNorm", "AI_VECTOR_CORE", 8, 12),
    ("MatMulV2", "AI_CORE", 60, 80),
    ("FlashAttentionScore", "MIX_AIC", 90, 120),
    ("MatMulV2", "AI_CORE", 40, 55),
];
const ATTENTION_BACKWARD: &[(&str, &str, i64, i64)] = &[
    ("MatMulV2", "AI_CORE", 80, 110),
    ("FlashAttentionScoreGrad", "MIX_AIC", 180, 240),
    ("MatMulV2", "AI_CORE", 120, 160),
    ("AddRmsNormGrad", "AI_VECTOR_CORE", 15, 22),
];
const MLP: &[(&str, &str, i64, i64)] = &[
    ("AddRmsNorm", "AI_VECTOR_CORE", 8, 12),
    ("MatMulV2", "AI_CORE", 80, 100),
    ("Swiglu", "AI_VECTOR_CORE", 10, 14),
    ("MatMulV2", "AI_CORE", 80, 100),
];
/// One GroupedMatmul at the mean load, µs (scaled by the rank's tokens).
const EXPERT_US: (i64, i64) = (110, 130);

/// (kind, min µs, max µs) of a collective's transfer.
const TP_ALLREDUCE: (i64, i64) = (20, 40);
const ALLTOALL: (i64, i64) = (30, 60);
const P2P: (i64, i64) = (40, 80);
const DP_ALLREDUCE: (i64, i64) = (300, 600);

impl Sim<'_> {
    fn us(&mut self, (lo, hi): (i64, i64)) -> i64 {
        self.rng.range(lo * 1000, hi * 1000)
    }

    /// The ranks of a stage, in rank order.
    fn stage_ranks(&self, stage: u32) -> Vec<u32> {
        let n = self.t.tp * self.t.dp;
        (stage * n..(stage + 1) * n).collect()
    }

    fn step(&mut self, number: i64, microbatches: u32) {
        let world = self.t.world() as usize;
        let starts = self.ready.clone();
        for m in 0..microbatches {
            for k in 0..self.t.pp {
                self.pass(k, m, false);
            }
        }
        for m in 0..microbatches {
            for k in (0..self.t.pp).rev() {
                self.pass(k, m, true);
            }
        }
        let all: Vec<u32> = (0..world as u32).collect();
        self.collective(&all, 1, OpKind::AllReduce, DP_ALLREDUCE);
        self.collective(&all, 3, OpKind::AllReduce, TP_ALLREDUCE);
        for r in 0..world {
            let launch = self.launch(r, self.ready[r]);
            let dur = self.us((140, 160)) * self.pct[r] / 100;
            self.task(r, ("ApplyAdamW", "AI_VECTOR_CORE"), dur, 0, launch);
        }
        for (r, &start) in starts.iter().enumerate().take(world) {
            let end = self.ready[r];
            self.out[r].steps.push(StepSpan {
                number,
                host_start: start - 100_000,
                end,
            });
            // The next step's host work (data loading) before its first launch.
            self.ready[r] = end + 110_000;
        }
    }

    /// A host launch for work starting on `r`'s device at `at`; returns its index.
    fn launch(&mut self, r: usize, at: i64) -> u32 {
        let l = &mut self.out[r].launches;
        l.push((at - 30_000, at));
        (l.len() - 1) as u32
    }

    fn task(
        &mut self,
        r: usize,
        (name, task_type): (&'static str, &'static str),
        dur: i64,
        tokens: i64,
        launch: u32,
    ) {
        let start = self.ready[r] + self.rng.range(1_000, 3_000);
        self.out[r].tasks.push(Task {
            name,
            task_type,
            start,
            dur,
            tokens,
            launch,
        });
        self.ready[r] = start + dur;
    }

    /// One microbatch's forward (or backward) pass on every rank of stage `k`: the receive from
    /// the previous stage (the next, backward), the layers, and the handoff time for the send.
    fn pass(&mut self, k: u32, m: u32, backward: bool) {
        let ranks = self.stage_ranks(k);
        let from = if backward {
            (k + 1 < self.t.pp).then(|| k + 1)
        } else {
            k.checked_sub(1)
        };
        if let Some(prev) = from {
            let n = self.t.tp * self.t.dp;
            for &r in &ranks {
                let peer = (prev * n + r % n) as usize;
                self.p2p(peer, r as usize);
            }
        }
        let launches: Vec<u32> = ranks
            .iter()
            .map(|&r| self.launch(r as usize, self.ready[r as usize]))
            .collect();
        for _ in 0..LAYERS {
            let attention = if backward {
                ATTENTION_BACKWARD
            } else {
                ATTENTION
            };
            self.compute(&ranks, attention, &launches, 1);
            if self.t.tp > 1 {
                self.collective(&ranks, 0, OpKind::AllReduce, TP_ALLREDUCE);
            }
            let scale = if backward { 2 } else { 1 };
            self.compute(&ranks, &MLP[..1], &launches, scale);
            if self.t.ep > 1 {
                self.experts(&ranks, &launches, scale, m);
            } else {
                self.compute(&ranks, &MLP[1..], &launches, scale);
            }
            if self.t.tp > 1 {
                self.collective(&ranks, 0, OpKind::AllReduce, TP_ALLREDUCE);
            }
        }
        for &r in &ranks {
            self.sent[r as usize] = self.ready[r as usize];
        }
    }

    fn compute(
        &mut self,
        ranks: &[u32],
        tasks: &[(&'static str, &'static str, i64, i64)],
        launches: &[u32],
        scale: i64,
    ) {
        for (i, &r) in ranks.iter().enumerate() {
            for &(name, tt, lo, hi) in tasks {
                let dur = self.us((lo, hi)) * scale * self.pct[r as usize] / 100;
                self.task(r as usize, (name, tt), dur, 0, launches[i]);
            }
        }
    }

    /// The MoE block with expert parallelism: dispatch all-to-all, two GroupedMatmuls sized by
    /// the tokens routed to the rank, combine all-to-all.
    fn experts(&mut self, ranks: &[u32], launches: &[u32], scale: i64, _m: u32) {
        self.collective(ranks, 2, OpKind::AllToAll, ALLTOALL);
        for (i, &r) in ranks.iter().enumerate() {
            let jitter = self.rng.range(950, 1050) as f64 / 1000.0;
            let tokens =
                (MICROBATCH_TOKENS as f64 * self.tokens_weight[r as usize] * jitter).round() as i64;
            for _ in 0..2 {
                let base = self.us(EXPERT_US) * scale * self.pct[r as usize] / 100;
                let dur = base * tokens / MICROBATCH_TOKENS;
                self.task(
                    r as usize,
                    ("GroupedMatmul", "AI_CORE"),
                    dur,
                    tokens,
                    launches[i],
                );
            }
        }
        self.collective(ranks, 2, OpKind::AllToAll, ALLTOALL);
    }

    /// A collective of every group of kind `KINDS[kind]` that has members in `ranks`: each
    /// member enters at its own time, all leave at the last arrival plus the transfer.
    fn collective(&mut self, ranks: &[u32], kind: usize, op: OpKind, transfer: (i64, i64)) {
        let mut seen = Vec::new();
        for &r in ranks {
            let Some(g) = self.member[r as usize][kind] else {
                continue;
            };
            if seen.contains(&g) {
                continue;
            }
            seen.push(g);
            let members: Vec<usize> = self.groups[g].ranks.iter().map(|&x| x as usize).collect();
            let arrive: Vec<i64> = members.iter().map(|&x| self.ready[x] + 2_000).collect();
            let end = arrive.iter().max().copied().unwrap_or(0) + self.us(transfer);
            for (&x, &a) in members.iter().zip(&arrive) {
                self.out[x].ops.push(CommOp {
                    kind: op,
                    group: g,
                    start: a,
                    end,
                });
                self.ready[x] = end;
            }
        }
    }

    /// A send from `peer` (posted when its output was ready) and the matching receive on `r`
    /// (posted when `r` was ready): both end at the later post plus the transfer.
    fn p2p(&mut self, peer: usize, r: usize) {
        let group = self
            .groups
            .iter()
            .position(|g| g.name == "pp" && g.ranks.contains(&(r as u32)))
            .expect("a rank with a pipeline peer is in a pp group");
        let (send, recv) = (self.sent[peer] + 1_000, self.ready[r] + 1_000);
        let end = send.max(recv) + self.us(P2P);
        self.out[peer].ops.push(CommOp {
            kind: OpKind::Send,
            group,
            start: send,
            end,
        });
        self.out[r].ops.push(CommOp {
            kind: OpKind::Receive,
            group,
            start: recv,
            end,
        });
        self.ready[peer] = self.ready[peer].max(end);
        self.ready[r] = end;
    }
}
