//! The ranks and process groups of a generated training job, in Megatron-LM's rank order
//! (tensor-parallel ranks adjacent, then data-parallel replicas, then pipeline stages:
//! `rank = stage * tp * dp + dp_index * tp + tp_index`), with expert-parallel groups as chunks
//! of each data-parallel group (../shared/formats/parallel-layout.md section 2). Each group gets
//! an HCCL-style id (`<ip>%<nic>_<port>_<n>_<timestamp>`, as the real db's COMMUNICATION_OP
//! groupName) and the job's name for it (`tp`, `dp`, `pp`, `exp`, `default_group`), as
//! torch_npu writes them into `parallel_group_info`.

/// A job's parallel sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    /// Expert-parallel size: divides `dp` (1: no expert parallelism).
    pub ep: u32,
}

/// One process group of the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobGroup {
    /// The HCCL group id (the key of `parallel_group_info`).
    pub id: String,
    /// The job's name for the group (Megatron / MindSpeed: `tp`, `dp`, `pp`, `exp`, `default_group`).
    pub name: &'static str,
    pub ranks: Vec<u32>,
}

impl Topology {
    pub fn world(&self) -> u32 {
        self.tp * self.pp * self.dp
    }
    pub fn stage(&self, r: u32) -> u32 {
        r / (self.tp * self.dp)
    }
    pub fn dp_index(&self, r: u32) -> u32 {
        (r / self.tp) % self.dp
    }
    pub fn tp_index(&self, r: u32) -> u32 {
        r % self.tp
    }
    /// The rank's index in its expert-parallel group.
    pub fn ep_index(&self, r: u32) -> u32 {
        self.dp_index(r) % self.ep
    }
    /// The rank at (stage, dp index, tp index).
    pub fn rank(&self, stage: u32, dp_index: u32, tp_index: u32) -> u32 {
        stage * self.tp * self.dp + dp_index * self.tp + tp_index
    }

    /// Every group of the job with more than one rank, plus the world group: the world, then
    /// per stage and replica its TP group, per stage and TP index its DP group (and the DP
    /// group's EP chunks), per replica and TP index its pipeline, per replica its model-parallel
    /// group (`mp`: every stage and TP index, where Megatron reduces the gradient norm).
    pub fn groups(&self) -> Vec<JobGroup> {
        let mut out: Vec<(&'static str, Vec<u32>)> =
            vec![("default_group", (0..self.world()).collect())];
        for s in 0..self.pp {
            for d in 0..self.dp {
                out.push(("tp", (0..self.tp).map(|t| self.rank(s, d, t)).collect()));
            }
            for t in 0..self.tp {
                let dp: Vec<u32> = (0..self.dp).map(|d| self.rank(s, d, t)).collect();
                if self.ep > 1 {
                    for chunk in dp.chunks(self.ep as usize) {
                        out.push(("exp", chunk.to_vec()));
                    }
                }
                out.push(("dp", dp));
            }
        }
        for d in 0..self.dp {
            for t in 0..self.tp {
                out.push(("pp", (0..self.pp).map(|s| self.rank(s, d, t)).collect()));
            }
            let mp = (0..self.pp).flat_map(|s| (0..self.tp).map(move |t| (s, t)));
            out.push(("mp", mp.map(|(s, t)| self.rank(s, d, t)).collect()));
        }
        out.retain(|(name, ranks)| ranks.len() > 1 || *name == "default_group");
        out.into_iter()
            .enumerate()
            .map(|(k, (name, ranks))| JobGroup {
                id: format!(
                    "90.91.105.{}%enp189s0f0_60000_{k}_1736410538306028",
                    46 + ranks[0] / 8
                ),
                name,
                ranks,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TP1 x PP2 x DP2 (the real job): pipelines {0,2} {1,3}, replicas {0,1} {2,3}.
    #[test]
    fn megatron_order() {
        let t = Topology {
            tp: 1,
            pp: 2,
            dp: 2,
            ep: 1,
        };
        let g = t.groups();
        let of = |name: &str| -> Vec<Vec<u32>> {
            g.iter()
                .filter(|x| x.name == name)
                .map(|x| x.ranks.clone())
                .collect()
        };
        assert_eq!(of("pp"), vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(of("dp"), vec![vec![0, 1], vec![2, 3]]);
        assert!(of("tp").is_empty());
        assert_eq!(of("default_group"), vec![vec![0, 1, 2, 3]]);
        assert_eq!((t.stage(3), t.dp_index(3), t.tp_index(3)), (1, 1, 0));
        let t = Topology {
            tp: 2,
            pp: 2,
            dp: 4,
            ep: 2,
        };
        let g = t.groups();
        let exp: Vec<&JobGroup> = g.iter().filter(|x| x.name == "exp").collect();
        assert_eq!(exp[0].ranks, vec![0, 2]);
        assert_eq!(exp[1].ranks, vec![4, 6]);
        assert_eq!(t.ep_index(6), 1);
        assert!(g.iter().all(|x| !x.ranks.is_empty()));
    }
}
