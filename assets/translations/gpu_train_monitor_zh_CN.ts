<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <source>the batch-size trial at {batch_size} took over an hour; try a smaller --max-batch</source>
        <translation>批大小 {batch_size} 的试验用时超过一小时；请尝试更小的 --max-batch</translation>
    </message>
    <message>
        <source>the batch-size trial at {batch_size} failed: {error}</source>
        <translation>批大小 {batch_size} 的试验失败：{error}</translation>
    </message>
    <message>
        <source>the batch-size trial process failed to start: {error}</source>
        <translation>批量大小试验进程未能启动：{error}</translation>
    </message>
    <message>
        <source>the batch-size trial process ran out of memory at batch 1</source>
        <translation>批量大小试验进程在批量 1 时内存不足</translation>
    </message>
    <message>
        <source>must be an integer from 1 to the largest batch ({max_batch}), got {start!r}</source>
        <translation>必须是 1 到最大批大小（{max_batch}）之间的整数，实际为 {start!r}</translation>
    </message>
    <message>
        <source>must be a positive number of bytes, got {capacity}</source>
        <translation>必须是正的字节数，实际为 {capacity}</translation>
    </message>
    <message>
        <source>the batch-size search was stopped</source>
        <translation>批大小探测已停止</translation>
    </message>
    <message>
        <source>the prediction said batch {batch}; no trial near it fitted, so the search went on with real trials only</source>
        <translation>预测给出批量 {batch}；其附近没有试验能放下，因此搜索改为只用真实试验继续</translation>
    </message>
    <message>
        <source>even batch size {start} needs more than {limit_gb:.2f} GB (capacity {capacity_gb:.2f} GB with a {margin:.0%} margin) on {device}</source>
        <translation>在 {device} 上，即使批大小为 {start} 也需要超过 {limit_gb:.2f} GB（总容量 {capacity_gb:.2f} GB，留出 {margin:.0%} 余量）</translation>
    </message>
    <message>
        <source>cannot read the checkpoint {path}: {why}</source>
        <translation>无法读取检查点 {path}：{why}</translation>
    </message>
    <message>
        <source>{path} is not a checkpoint this app can load safely: it carries code (it would call {callable}); nothing in it was run</source>
        <translation>{path} 不是本应用可以安全加载的检查点：它携带代码（会调用 {callable}）；其中的任何内容都没有被执行</translation>
    </message>
    <message>
        <source>{path} is damaged or not a checkpoint (its contents are not tensors and plain values: {what}; nothing in it was run)</source>
        <translation>{path} 已损坏或不是检查点（其内容不只是张量和普通值：{what}；其中的任何内容都没有被执行）</translation>
    </message>
    <message>
        <source>{path} is damaged or not a checkpoint (it may be incomplete: {error})</source>
        <translation>{path} 已损坏或不是检查点（可能不完整：{error}）</translation>
    </message>
    <message>
        <source>{path} is not a gpu-train-monitor checkpoint (a PyTorch file without a run&apos;s record; resume from a file the app saved under checkpoints/)</source>
        <translation>{path} 不是 gpu-train-monitor 的检查点（这是一个没有运行记录的 PyTorch 文件；请从本应用保存在 checkpoints/ 下的文件恢复）</translation>
    </message>
    <message>
        <source>{path} was saved by a newer gpu-train-monitor (checkpoint format {version}); update the app to resume it</source>
        <translation>{path} 由更新版本的 gpu-train-monitor 保存（检查点格式 {version}）；请更新本应用后再恢复</translation>
    </message>
    <message>
        <source>{path} is damaged: its {key!r} entry is missing or not a {kind}</source>
        <translation>{path} 已损坏：其 {key!r} 条目缺失或不是 {kind}</translation>
    </message>
    <message>
        <source>{path} holds a config this version cannot run ({error})</source>
        <translation>{path} 中的配置无法在此版本中运行（{error}）</translation>
    </message>
    <message>
        <source>{path} is a checkpoint of {saved_model} trained on {saved_dataset}, not {model} on {dataset}; resume it with its own model and dataset, or start a new run without resuming</source>
        <translation>{path} 是在 {saved_dataset} 上训练的 {saved_model} 的检查点，而不是在 {dataset} 上训练的 {model}；请用它自己的模型和数据集恢复，或者不恢复而开始新的运行</translation>
    </message>
    <message>
        <source>a resumed run keeps its checkpoint&apos;s {field} ({saved}); {value} would train something else: start a new run instead</source>
        <translation>恢复的运行沿用检查点的 {field}（{saved}）；{value} 会训练出不同的东西：请改为开始新的运行</translation>
    </message>
    <message>
        <source>{path} was saved mid-epoch with the {placement} placement; resume it with that placement (one saved at an epoch&apos;s end may change it)</source>
        <translation>{path} 是在一轮中途以 {placement} 数据放置保存的；请以相同的数据放置恢复（在一轮结束时保存的检查点可以更改数据放置）</translation>
    </message>
    <message>
        <source>{path} was saved on {saved_on}: random draws on {device_type} differ, so the data order and augmentation from here on differ from an uninterrupted run&apos;s</source>
        <translation>{path} 是在 {saved_on} 上保存的：{device_type} 上的随机抽取与之不同，因此从这里开始的数据顺序和数据增强与未中断的运行不同</translation>
    </message>
    <message>
        <source>nothing to train: {path} was saved at step {step} (epoch {epoch}) and this run ends at step {total_steps}; give it a longer length (--epochs or --max-steps, counted from the run&apos;s start)</source>
        <translation>没有可训练的内容：{path} 保存于第 {step} 步（第 {epoch} 轮），而本次运行在第 {total_steps} 步结束；请给出更长的训练长度（--epochs 或 --max-steps，从运行开始时算起）</translation>
    </message>
    <message>
        <source>{path} was trained on {saved_dataset} ({saved_classes} classes, {saved_channels} channels); this run&apos;s data is {dataset} ({classes} classes, {channels} channels): resume it with the data it was trained on</source>
        <translation>{path} 是在 {saved_dataset}（{saved_classes} 个类别，{saved_channels} 个通道）上训练的；本次运行的数据是 {dataset}（{classes} 个类别，{channels} 个通道）：请用训练它时的数据恢复</translation>
    </message>
    <message>
        <source>{path} does not fit the model and optimizer built for this run ({error})</source>
        <translation>{path} 与本次运行构建的模型和优化器不匹配（{error}）</translation>
    </message>
    <message>
        <source>resumed from {path}: step {step}, at the end of epoch {epoch}</source>
        <translation>已从 {path} 恢复：第 {step} 步，位于第 {epoch} 轮结束时</translation>
    </message>
    <message>
        <source>resumed from {path}: step {step}, at epoch {epoch}</source>
        <translation>已从 {path} 恢复：第 {step} 步，位于第 {epoch} 轮中</translation>
    </message>
    <message>
        <source>checkpoint not saved at step {step}: cannot write {path} ({why}); training goes on</source>
        <translation>第 {step} 步的检查点未保存：无法写入 {path}（{why}）；训练继续</translation>
    </message>
    <message>
        <source>configuration {index} ({label}): {option}: {detail}</source>
        <translation>配置 {index}（{label}）：{option}：{detail}</translation>
    </message>
    <message>
        <source>{item!r} is not setting=value (e.g. device=cpu or amp=bf16)</source>
        <translation>{item!r} 不是 设置=值 形式（例如 device=cpu 或 amp=bf16）</translation>
    </message>
    <message>
        <source>{item!r}: unknown setting {field!r}; settings: {settings}</source>
        <translation>{item!r}：未知设置 {field!r}；可用的设置：{settings}</translation>
    </message>
    <message>
        <source>{item!r}: {field} is shared by every run of a comparison (so they race over the same steps); give it once, as {option}</source>
        <translation>{item!r}：{field} 由对比中的所有运行共用（这样它们训练相同的步数）；请只给出一次，写作 {option}</translation>
    </message>
    <message>
        <source>{item!r}: {error}</source>
        <translation>{item!r}：{error}</translation>
    </message>
    <message>
        <source>{text!r} sets nothing; write setting=value pairs separated by commas</source>
        <translation>{text!r} 没有设置任何内容；请写出以逗号分隔的 设置=值 对</translation>
    </message>
    <message>
        <source>a run sets nothing; give setting=value pairs</source>
        <translation>某次运行没有设置任何内容；请给出 setting=value 形式的设置</translation>
    </message>
    <message>
        <source>a comparison needs {min_runs} to {max_runs} configurations, got {count}</source>
        <translation>对比需要 {min_runs} 到 {max_runs} 个配置，实际为 {count} 个</translation>
    </message>
    <message>
        <source>configuration {index}: {error}</source>
        <translation>配置 {index}：{error}</translation>
    </message>
    <message>
        <source>configurations {first} and {second} are the same run; change at least one setting between them</source>
        <translation>配置 {first} 和 {second} 是同一个运行；请让它们至少有一项设置不同</translation>
    </message>
    <message>
        <source>CPU vs GPU</source>
        <translation>CPU 对比 GPU</translation>
    </message>
    <message>
        <source>the same run on the CPU and on {gpu}</source>
        <translation>同一运行分别在 CPU 和 {gpu} 上训练</translation>
    </message>
    <message>
        <source>stream vs resident</source>
        <translation>流式加载 对比 常驻设备</translation>
    </message>
    <message>
        <source>data streamed from host memory by a DataLoader against data kept on {device}</source>
        <translation>由 DataLoader 从主机内存流式加载数据，对比数据常驻 {device}</translation>
    </message>
    <message>
        <source>AMP off vs bf16</source>
        <translation>AMP 关闭 对比 bf16</translation>
    </message>
    <message>
        <source>full precision against bf16 autocast on {gpu}</source>
        <translation>在 {gpu} 上对比全精度与 bf16 autocast</translation>
    </message>
    <message>
        <source>the default memory format against channels_last on {gpu}</source>
        <translation>在 {gpu} 上对比默认内存格式与 channels_last</translation>
    </message>
    <message>
        <source>activation checkpointing off vs on</source>
        <translation>激活检查点 关闭 对比 开启</translation>
    </message>
    <message>
        <source>the model&apos;s blocks keeping their activations against recomputing them in backward on {device}: the peak memory saved and the time it costs</source>
        <translation>在 {device} 上，模型各块保留激活值与在反向传播时重新计算它们的对比：节省的峰值内存及其时间代价</translation>
    </message>
    <message>
        <source>expandable segments off vs on</source>
        <translation>可扩展段 关闭 对比 开启</translation>
    </message>
    <message>
        <source>CUDA&apos;s caching allocator keeping fixed segments against growing them in place on {gpu}: each run&apos;s peak reserved memory and its cache gap (reserved but not allocated)</source>
        <translation>在 {gpu} 上，CUDA 缓存分配器保留固定段与原地扩展段的对比：每次运行的已保留峰值及其缓存差（已保留但未分配）</translation>
    </message>
    <message>
        <source>attention: fused (SDPA) vs plain (softmax of QK^T)</source>
        <translation>注意力：融合 (SDPA) 与朴素 (QK^T 的 softmax)</translation>
    </message>
    <message>
        <source>the GPT&apos;s attention through scaled_dot_product_attention against the softmax of QK^T written by hand, on {device}: each one&apos;s peak memory, and how it grows when the sequence doubles</source>
        <translation>在 {device} 上比较 GPT 通过 scaled_dot_product_attention 计算的注意力与手写的 QK^T softmax：各自的峰值内存，以及序列长度加倍时它如何增长</translation>
    </message>
    <message>
        <source>compiled vs eager</source>
        <translation>torch.compile 对比 eager</translation>
    </message>
    <message>
        <source>torch.compile against eager PyTorch on {device} (compile time shown apart)</source>
        <translation>在 {device} 上对比 torch.compile 与 eager 模式的 PyTorch（编译时间单独显示）</translation>
    </message>
    <message>
        <source>expandable segments are a setting of CUDA&apos;s caching allocator, and this machine has no CUDA GPU</source>
        <translation>可扩展段是 CUDA 缓存分配器的设置，而本机没有 CUDA GPU</translation>
    </message>
    <message>
        <source>expandable segments are a setting of CUDA&apos;s caching allocator, and {gpu} is not a CUDA GPU</source>
        <translation>可扩展段是 CUDA 缓存分配器的设置，而 {gpu} 不是 CUDA GPU</translation>
    </message>
    <message>
        <source>needs a CUDA GPU</source>
        <translation>需要 CUDA GPU</translation>
    </message>
    <message>
        <source>1 vs {n} GPUs</source>
        <translation>1 对比 {n} 个 GPU</translation>
    </message>
    <message>
        <source>data-parallel: one process against {n} GPUs training the same global batch of {batch_size} (scaling efficiency shown)</source>
        <translation>数据并行：1 个进程对比 {n} 个 GPU，训练相同的全局批次 {batch_size}（显示扩展效率）</translation>
    </message>
    <message>
        <source>1 vs {n} CPU processes</source>
        <translation>1 对比 {n} 个 CPU 进程</translation>
    </message>
    <message>
        <source>data-parallel: one process against {n} CPU processes training the same global batch of {batch_size} (scaling efficiency shown)</source>
        <translation>数据并行：1 个进程对比 {n} 个 CPU 进程，训练相同的全局批次 {batch_size}（显示扩展效率）</translation>
    </message>
    <message>
        <source>no ratio: {why}</source>
        <translation>没有速度比：{why}</translation>
    </message>
    <message>
        <source>fewer than two runs finished</source>
        <translation>完成的运行少于两个</translation>
    </message>
    <message>
        <source>{headline}; scaling efficiency {efficiencies} (images/s per process against the fewest)</source>
        <translation>{headline}；扩展效率 {efficiencies}（每个进程的图像/秒，相对于进程数最少的运行）</translation>
    </message>
    <message>
        <source>{fast} trains {model} {ratio} faster than {slow} at batch {batch}; warm-up excluded</source>
        <translation>批大小为 {batch} 时，{fast} 训练 {model} 的速度是 {slow} 的 {ratio}；不含预热</translation>
    </message>
    <message>
        <source>{fast} trains {model} {ratio} faster than {slow}; warm-up excluded</source>
        <translation>{fast} 训练 {model} 的速度是 {slow} 的 {ratio}；不含预热</translation>
    </message>
    <message>
        <source>{fast} trains {ratio} faster than {slow} at batch {batch}; warm-up excluded</source>
        <translation>批大小为 {batch} 时，{fast} 的训练速度是 {slow} 的 {ratio}；不含预热</translation>
    </message>
    <message>
        <source>{fast} trains {ratio} faster than {slow}; warm-up excluded</source>
        <translation>{fast} 的训练速度是 {slow} 的 {ratio}；不含预热</translation>
    </message>
    <message>
        <source>activation checkpointing took the step&apos;s peak memory from {off_peak} to {on_peak} ({saved:.0%} less)</source>
        <translation>激活检查点把一步的峰值内存从 {off_peak} 降到 {on_peak}（少 {saved:.0%}）</translation>
    </message>
    <message>
        <source>activation checkpointing did not lower the step&apos;s peak memory ({off_peak} without, {on_peak} with)</source>
        <translation>激活检查点没有降低一步的峰值内存（不用时 {off_peak}，使用时 {on_peak}）</translation>
    </message>
    <message>
        <source>its time cost is within the noise ({off_rate:.0f} images/s without, {on_rate:.0f} with)</source>
        <translation>其时间代价在噪声范围内（不用时 {off_rate:.0f} 图像/秒，使用时 {on_rate:.0f}）</translation>
    </message>
    <message>
        <source>it cost {cost:.0%} more time per image ({off_rate:.0f} images/s without, {on_rate:.0f} with)</source>
        <translation>每张图像多花 {cost:.0%} 的时间（不用时 {off_rate:.0f} 图像/秒，使用时 {on_rate:.0f}）</translation>
    </message>
    <message>
        <source>it took {gain:.0%} less time per image ({off_rate:.0f} images/s without, {on_rate:.0f} with)</source>
        <translation>每张图像少花 {gain:.0%} 的时间（不用时 {off_rate:.0f} 图像/秒，使用时 {on_rate:.0f}）</translation>
    </message>
    <message>
        <source>its time cost is within the noise ({off_rate:.0f} tokens/s without, {on_rate:.0f} with)</source>
        <translation>其时间代价在噪声范围内（不用时 {off_rate:.0f} 词元/秒，使用时 {on_rate:.0f}）</translation>
    </message>
    <message>
        <source>it cost {cost:.0%} more time per token ({off_rate:.0f} tokens/s without, {on_rate:.0f} with)</source>
        <translation>每个词元多花 {cost:.0%} 的时间（不用时 {off_rate:.0f} 词元/秒，使用时 {on_rate:.0f}）</translation>
    </message>
    <message>
        <source>it took {gain:.0%} less time per token ({off_rate:.0f} tokens/s without, {on_rate:.0f} with)</source>
        <translation>每个词元少花 {gain:.0%} 的时间（不用时 {off_rate:.0f} 词元/秒，使用时 {on_rate:.0f}）</translation>
    </message>
    <message>
        <source>peaks counted from the tensors a step held (no allocator peak on this device)</source>
        <translation>峰值按一步所持有的张量计算（此设备没有分配器峰值）</translation>
    </message>
    <message>
        <source>the allocator&apos;s peaks</source>
        <translation>分配器的峰值</translation>
    </message>
    <message>
        <source>{memory}, and {time}; {how}, warm-up excluded</source>
        <translation>{memory}，且{time}；{how}，不计预热</translation>
    </message>
    <message>
        <source>run {run} ({label}) {status}: {message}</source>
        <translation>运行 {run}（{label}）{status}：{message}</translation>
    </message>
    <message>
        <source>run {run} ({label}) completed only {steps} steps, all in its first report (the warm-up, left out of images/s): too few for a rate; train more steps</source>
        <translation>运行 {run}（{label}）只完成了 {steps} 步，全部在第一次报告内（预热，不计入 images/s）：太少，无法得出速度；请多训练一些步</translation>
    </message>
    <message>
        <source>run {run} ({label}) {status}</source>
        <translation>运行 {run}（{label}）{status}</translation>
    </message>
    <message>
        <source>no clear difference between {fast} and {slow}: their images/s spreads overlap ({fast} {fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within the noise; about {steps} steps per run would tell a difference this size</source>
        <translation>{fast} 与 {slow} 之间没有明显差别：两者的 images/s 区间重叠（{fast} {fast_low:.0f}-{fast_high:.0f}，{slow} {slow_low:.0f}-{slow_high:.0f}），因此 {ratio} 在噪声范围内；每个运行约 {steps} 步才能分辨这么大的差别</translation>
    </message>
    <message>
        <source>no clear difference between {fast} and {slow}: their images/s spreads overlap ({fast} {fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within the noise; more steps per run would tell</source>
        <translation>{fast} 与 {slow} 之间没有明显差别：两者的 images/s 区间重叠（{fast} {fast_low:.0f}-{fast_high:.0f}，{slow} {slow_low:.0f}-{slow_high:.0f}），因此 {ratio} 在噪声范围内；每个运行多训练一些步才能分辨</translation>
    </message>
    <message>
        <source>no clear difference between {fast} and {slow}: their tokens/s spreads overlap ({fast} {fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within the noise; about {steps} steps per run would tell a difference this size</source>
        <translation>{fast} 与 {slow} 之间没有明显差别：两者的 tokens/s 区间重叠（{fast} {fast_low:.0f}-{fast_high:.0f}，{slow} {slow_low:.0f}-{slow_high:.0f}），因此 {ratio} 在噪声范围内；每个运行约 {steps} 步才能分辨这么大的差别</translation>
    </message>
    <message>
        <source>no clear difference between {fast} and {slow}: their tokens/s spreads overlap ({fast} {fast_low:.0f}-{fast_high:.0f}, {slow} {slow_low:.0f}-{slow_high:.0f}), so {ratio} is within the noise; more steps per run would tell</source>
        <translation>{fast} 与 {slow} 之间没有明显差别：两者的 tokens/s 区间重叠（{fast} {fast_low:.0f}-{fast_high:.0f}，{slow} {slow_low:.0f}-{slow_high:.0f}），因此 {ratio} 在噪声范围内；每个运行多训练一些步才能分辨</translation>
    </message>
    <message>
        <source>{earlier}; {following}</source>
        <translation>{earlier}；{following}</translation>
    </message>
    <message>
        <source>runs {first} ({first_label}) and {second} ({second_label}) differ only in speed settings but computed different losses: step {step}: {x:.4f} vs {y:.4f}</source>
        <translation>运行 {first}（{first_label}）和 {second}（{second_label}）仅在速度设置上不同，却计算出了不同的损失：第 {step} 步：{x:.4f} 对 {y:.4f}</translation>
    </message>
    <message>
        <source>runs that differ only in speed settings computed the same losses (first {steps} steps within {tolerance:.0%})</source>
        <translation>仅在速度设置上不同的运行计算出了相同的损失（前 {steps} 步，误差在 {tolerance:.0%} 以内）</translation>
    </message>
    <message>
        <source>device to train on: auto, cpu, cuda, cuda:N or mps</source>
        <translation>训练所用的设备：auto、cpu、cuda、cuda:N 或 mps</translation>
    </message>
    <message>
        <source>folder holding the dataset files (default: the user data folder)</source>
        <translation>存放数据集文件的文件夹（默认：用户数据文件夹）</translation>
    </message>
    <message>
        <source>download the dataset into the data folder when it is missing</source>
        <translation>数据集缺失时下载到数据文件夹</translation>
    </message>
    <message>
        <source>auto (resnet18 on a GPU, tiny-cnn on a CPU; for text gpt-small on a GPU, gpt-tiny on a CPU), tiny-cnn, resnet18 (CIFAR stem), speedrun-net (a small fast CIFAR net), gpt-tiny or gpt-small (a GPT for text), any torchvision classifier name, or your own: {spec_form} (or path/to/file.py:factory), a callable returning an nn.Module (given num_classes= and in_channels= when it takes them)</source>
        <translation>auto（GPU 上用 resnet18，CPU 上用 tiny-cnn；文本数据时 GPU 上用 gpt-small，CPU 上用 gpt-tiny）、tiny-cnn、resnet18（CIFAR 版输入层）、speedrun-net（小而快的 CIFAR 网络）、gpt-tiny 或 gpt-small（用于文本的 GPT）、任意 torchvision 分类模型名，或你自己的模型：{spec_form}（或 path/to/file.py:factory），即一个返回 nn.Module 的可调用对象（它接受 num_classes= 和 in_channels= 时会传入）</translation>
    </message>
    <message>
        <source>transformer blocks of a GPT model (default: its preset&apos;s)</source>
        <translation>GPT 模型的 Transformer 块数（默认：其预设值）</translation>
    </message>
    <message>
        <source>a GPT model&apos;s embedding width (default: its preset&apos;s)</source>
        <translation>GPT 模型的嵌入宽度（默认：其预设值）</translation>
    </message>
    <message>
        <source>a GPT model&apos;s attention heads (default: its preset&apos;s)</source>
        <translation>GPT 模型的注意力头数（默认：其预设值）</translation>
    </message>
    <message>
        <source>a GPT model&apos;s attention: fused (scaled_dot_product_attention) or plain (the softmax of QK^T, masked: it holds each head&apos;s T x T scores)</source>
        <translation>GPT 模型的注意力：融合（scaled_dot_product_attention）或朴素（对加了因果掩码的 QK^T 做 softmax：每个头都要保存 T x T 的分数）</translation>
    </message>
    <message>
        <source>dataset to train on: synthetic-text and text:PATH (a text file, read as bytes) are text; or your own: a callable (path/to/file.py:factory works too) returning a map-style Dataset of (image tensor CxHxW, int label), or a (train, val) tuple or a {&apos;train&apos;, &apos;val&apos;} dict of them</source>
        <translation>训练所用的数据集：synthetic-text 和 text:PATH（一个文本文件，按字节读取）是文本；或你自己的数据集：一个可调用对象（也可以写 path/to/file.py:factory），返回由 (图像张量 CxHxW, int 标签) 组成的 map-style Dataset，或由它们组成的 (train, val) 元组或 {&apos;train&apos;, &apos;val&apos;} 字典</translation>
    </message>
    <message>
        <source>training samples generated for a synthetic dataset: images, or sequences for synthetic-text</source>
        <translation>为合成数据集生成的训练样本数：图像，或 synthetic-text 的序列</translation>
    </message>
    <message>
        <source>samples per training step: images, or sequences of text</source>
        <translation>每个训练步的样本数：图像，或文本序列</translation>
    </message>
    <message>
        <source>tokens in each sequence of a text dataset (a sample is one sequence)</source>
        <translation>文本数据集每个序列的词元数（一个样本就是一个序列）</translation>
    </message>
    <message>
        <source>passes over the training set (default: 1, or as many as --max-steps needs when that is given; with both, the run stops at whichever comes first)</source>
        <translation>遍历训练集的轮数（默认：1；给出 --max-steps 时为它所需的轮数；两者都给出时，先达到哪个就在哪里停止）</translation>
    </message>
    <message>
        <source>train for this many steps, over as many epochs as that takes (default: one epoch; with --epochs too, the run stops at whichever comes first)</source>
        <translation>训练这么多步，需要多少轮就跑多少轮（默认：一轮；同时给出 --epochs 时，先达到哪个就在哪里停止）</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>SGD momentum</source>
        <translation>SGD 动量</translation>
    </message>
    <message>
        <source>weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <source>automatic mixed precision</source>
        <translation>自动混合精度</translation>
    </message>
    <message>
        <source>use the channels_last memory format for the model and batches</source>
        <translation>模型和批次使用 channels_last 内存格式</translation>
    </message>
    <message>
        <source>keep only each block&apos;s input for backward and run its forward again there: less activation memory for more compute (torch.utils.checkpoint over the model&apos;s blocks)</source>
        <translation>反向传播只保留每个块的输入，并在那时重新运行其前向：用更多计算换更少的激活内存（对模型各块使用 torch.utils.checkpoint）</translation>
    </message>
    <message>
        <source>CUDA&apos;s caching allocator: on grows its segments in place instead of caching fixed blocks (less memory reserved but unused); auto keeps what PYTORCH_CUDA_ALLOC_CONF says (off when it says nothing); CUDA only</source>
        <translation>CUDA 缓存分配器：开启时原地扩展其段，而不是缓存固定块（已保留但未使用的内存更少）；自动则沿用 PYTORCH_CUDA_ALLOC_CONF 的设置（未设置时为关闭）；仅限 CUDA</translation>
    </message>
    <message>
        <source>compile the model with torch.compile (its compile time is reported apart and left out of images/s; needs a C++ compiler on the CPU, Triton on CUDA)</source>
        <translation>用 torch.compile 编译模型（编译时间单独报告，不计入图像/秒；CPU 上需要 C++ 编译器，CUDA 上需要 Triton）</translation>
    </message>
    <message>
        <source>let cuDNN time its convolution algorithms and keep the fastest (CUDA only; pays off when batch shapes do not change)</source>
        <translation>让 cuDNN 对各卷积算法计时并选用最快的（仅限 CUDA；批次形状不变时才划算）</translation>
    </message>
    <message>
        <source>update all parameters in one fused kernel (on CUDA it also keeps fp16&apos;s gradient-scaler check on the device: no host sync per step)</source>
        <translation>用一个融合内核更新全部参数（在 CUDA 上还会把 fp16 梯度缩放器的检查留在设备上：每步无需主机同步）</translation>
    </message>
    <message>
        <source>where the data lives: stream (DataLoader) or resident (on the device); auto picks resident when it fits</source>
        <translation>数据放置位置：stream（DataLoader 流式加载）或 resident（常驻设备）；auto 在放得下时选 resident</translation>
    </message>
    <message>
        <source>DataLoader worker processes (stream placement)</source>
        <translation>DataLoader 数据加载进程数（stream 放置）</translation>
    </message>
    <message>
        <source>pin host batches for faster copies to a GPU (stream placement)</source>
        <translation>把主机上的批次放进锁页内存，加快拷贝到 GPU（stream 放置）</translation>
    </message>
    <message>
        <source>copy batches to the GPU asynchronously (stream placement)</source>
        <translation>异步地把批次拷贝到 GPU（stream 放置）</translation>
    </message>
    <message>
        <source>random seed for data, model and shuffling</source>
        <translation>数据、模型和打乱顺序所用的随机种子</translation>
    </message>
    <message>
        <source>seconds between progress reports (no host sync: the losses arrive a report later on a GPU)</source>
        <translation>两次进度报告之间的秒数（不做主机同步：在 GPU 上损失值晚一次报告到达）</translation>
    </message>
    <message>
        <source>on out of memory: stop the run, or halve the batch and continue</source>
        <translation>显存不足时：停止运行，或把批次减半后继续</translation>
    </message>
    <message>
        <source>processes training together, data-parallel (torch.distributed): one per GPU, or CPU processes where there is no GPU; batch_size is split evenly over them</source>
        <translation>以数据并行方式（torch.distributed）一起训练的进程数：每个 GPU 一个，没有 GPU 时为 CPU 进程；batch_size 在它们之间平均分配</translation>
    </message>
    <message>
        <source>synchronise BatchNorm statistics across processes (nproc &gt; 1): each step then normalises over the whole batch, as one process would</source>
        <translation>在进程间同步 BatchNorm 统计量（nproc &gt; 1）：每一步都在整个批次上归一化，和单进程时一样</translation>
    </message>
    <message>
        <source>one of {choices}, text:PATH (a text file), or {spec_form}</source>
        <translation>{choices} 之一、text:PATH（一个文本文件），或 {spec_form}</translation>
    </message>
    <message>
        <source>{batch_size} does not split evenly over {processes} processes; use a multiple of {multiple} (each process trains batch_size / nproc images a step)</source>
        <translation>{batch_size} 不能平均分给 {processes} 个进程；请使用 {multiple} 的倍数（每个进程每步训练 batch_size / nproc 张图像）</translation>
    </message>
    <message>
        <source>{device} names one device, but {processes} processes each take their own: use cuda (one GPU each), cpu or auto</source>
        <translation>{device} 只指定了一个设备，但 {processes} 个进程各需自己的设备：请使用 cuda（每个进程一个 GPU）、cpu 或 auto</translation>
    </message>
    <message>
        <source>shrink is for one process: the processes of a data-parallel run would each halve their batch at different steps; use stop, or fewer images per step</source>
        <translation>shrink 只适用于单进程：数据并行运行的各进程会在不同的步把批次减半；请使用 stop，或减少每步的图像数</translation>
    </message>
    <message>
        <source>{batch_size} is larger than the training set ({sequences:,} sequences of {seq_len} tokens); use at most {limit}, or shorter sequences</source>
        <translation>{batch_size} 大于训练集（{sequences:,} 个 {seq_len} 词元的序列）；最多使用 {limit}，或用更短的序列</translation>
    </message>
    <message>
        <source>{batch_size} is larger than the training set ({images:,} images); use at most {limit}</source>
        <translation>{batch_size} 大于训练集（{images:,} 张图像）；最多使用 {limit}</translation>
    </message>
    <message>
        <source>one of {choices}, or {spec_form}</source>
        <translation>{choices} 之一，或 {spec_form}</translation>
    </message>
    <message>
        <source>one of {choices}</source>
        <translation>{choices} 之一</translation>
    </message>
    <message>
        <source>true or false</source>
        <translation>true 或 false</translation>
    </message>
    <message>
        <source>an integer from {minimum} to {maximum}</source>
        <translation>{minimum} 到 {maximum} 之间的整数</translation>
    </message>
    <message>
        <source>a number from {minimum} to {maximum}</source>
        <translation>{minimum} 到 {maximum} 之间的数</translation>
    </message>
    <message>
        <source>a string</source>
        <translation>字符串</translation>
    </message>
    <message>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <source>a value is required ({allowed})</source>
        <translation>需要一个值（{allowed}）</translation>
    </message>
    <message>
        <source>must be true or false, got {value}</source>
        <translation>必须是 true 或 false，实际为 {value}</translation>
    </message>
    <message>
        <source>must be a non-empty string ({help}), got {value}</source>
        <translation>必须是非空字符串（{help}），实际为 {value}</translation>
    </message>
    <message>
        <source>the folder name {start}... in it is {length} bytes long; file systems allow at most {limit}</source>
        <translation>其中的文件夹名 {start}... 长 {length} 字节；文件系统最多允许 {limit} 字节</translation>
    </message>
    <message>
        <source>must be {allowed}, got {value}</source>
        <translation>必须是 {allowed}，实际为 {value}</translation>
    </message>
    <message>
        <source>fraction of the capacity kept free</source>
        <translation>保持空闲的总容量比例</translation>
    </message>
    <message>
        <source>first batch size tried</source>
        <translation>首个尝试的批大小</translation>
    </message>
    <message>
        <source>largest batch size tried</source>
        <translation>尝试的最大批大小</translation>
    </message>
    <message>
        <source>data_dir: cannot read image folder {root}: {error}</source>
        <translation>data_dir：无法读取图像文件夹 {root}：{error}</translation>
    </message>
    <message>
        <source>{path}: cannot be read ({error})</source>
        <translation>{path}：无法读取（{error}）</translation>
    </message>
    <message>
        <source>{path}: not a CIFAR-10 python batch, or damaged ({error})</source>
        <translation>{path}：不是 CIFAR-10 python 批次文件，或已损坏（{error}）</translation>
    </message>
    <message>
        <source>{path}: not a CIFAR-10 python batch (holds a {type}, expected a dict)</source>
        <translation>{path}：不是 CIFAR-10 python 批次文件（包含的是 {type}，应为 dict）</translation>
    </message>
    <message>
        <source>{path}: not a CIFAR-10 python batch (no b&apos;data&apos; array and b&apos;labels&apos; list)</source>
        <translation>{path}：不是 CIFAR-10 python 批次文件（没有 b&apos;data&apos; 数组和 b&apos;labels&apos; 列表）</translation>
    </message>
    <message>
        <source>{path}: b&apos;data&apos; is {dtype} {shape}, expected uint8 (N, {width}) with N &gt; 0</source>
        <translation>{path}：b&apos;data&apos; 为 {dtype} {shape}，应为 uint8 (N, {width}) 且 N &gt; 0</translation>
    </message>
    <message>
        <source>{path}: b&apos;labels&apos; is not a list of class numbers ({error})</source>
        <translation>{path}：b&apos;labels&apos; 不是类别编号的列表（{error}）</translation>
    </message>
    <message>
        <source>{path}: {images} images but b&apos;labels&apos; is {dtype} {shape}</source>
        <translation>{path}：有 {images} 张图像，但 b&apos;labels&apos; 为 {dtype} {shape}</translation>
    </message>
    <message>
        <source>{path}: label {label} is outside 0..{last}</source>
        <translation>{path}：标签 {label} 超出 0..{last}</translation>
    </message>
    <message>
        <source>{path}: expected b&apos;label_names&apos; with {classes} class names</source>
        <translation>{path}：应有包含 {classes} 个类别名的 b&apos;label_names&apos;</translation>
    </message>
    <message>
        <source>the val split&apos;s images are {val_dims} but the train split&apos;s are {train_dims}: both splits need one image size</source>
        <translation>val 划分的图像为 {val_dims}，而 train 划分的为 {train_dims}：两个划分的图像尺寸必须相同</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>returned a dict without a &apos;train&apos; entry (its keys: {keys}); give &apos;train&apos; and &apos;val&apos;</source>
        <translation>返回的 dict 没有 &apos;train&apos; 项（它的键：{keys}）；请提供 &apos;train&apos; 和 &apos;val&apos;</translation>
    </message>
    <message>
        <source>returned an IterableDataset, which has no length: give a map-style Dataset (with __len__ and __getitem__)</source>
        <translation>返回的是 IterableDataset，它没有长度：请提供 map-style Dataset（带 __len__ 和 __getitem__）</translation>
    </message>
    <message>
        <source>returned a {part} split that is an IterableDataset, which has no length: give a map-style Dataset (with __len__ and __getitem__)</source>
        <translation>返回的 {part} 划分是 IterableDataset，它没有长度：请提供 map-style Dataset（带 __len__ 和 __getitem__）</translation>
    </message>
    <message>
        <source>returned {found}; expected a map-style Dataset (with __len__ and __getitem__), a (train, val) tuple of them or a dict with &apos;train&apos; and &apos;val&apos;</source>
        <translation>返回的是 {found}；应为 map-style Dataset（带 __len__ 和 __getitem__）、由它们组成的 (train, val) 元组，或含 &apos;train&apos; 和 &apos;val&apos; 的 dict</translation>
    </message>
    <message>
        <source>returned a {part} split that is {found}; expected a map-style Dataset (with __len__ and __getitem__)</source>
        <translation>返回的 {part} 划分是 {found}；应为 map-style Dataset（带 __len__ 和 __getitem__）</translation>
    </message>
    <message>
        <source>len() of the dataset{where} raised {error}</source>
        <translation>对数据集{where}调用 len() 时抛出 {error}</translation>
    </message>
    <message>
        <source>the dataset{where} is empty</source>
        <translation>数据集{where}为空</translation>
    </message>
    <message>
        <source>{item} has an image of {dims} but item 0&apos;s is {first_dims}: every image must have the same size</source>
        <translation>{item}的图像为 {dims}，但第 0 项的为 {first_dims}：所有图像的尺寸必须相同</translation>
    </message>
    <message>
        <source>{item} has a {dtype} image but item 0&apos;s is {first_dtype}: give every image the same kind of values</source>
        <translation>{item}的图像为 {dtype}，但第 0 项的为 {first_dtype}：所有图像的数值类型必须一致</translation>
    </message>
    <message>
        <source>reading {item} raised {error}</source>
        <translation>读取{item}时抛出 {error}</translation>
    </message>
    <message>
        <source>a {type} of {count}</source>
        <translation>含 {count} 个元素的 {type}</translation>
    </message>
    <message>
        <source>{item} is {found}; expected a pair (image tensor, int label)</source>
        <translation>{item}是 {found}；应为一对 (图像张量, int 标签)</translation>
    </message>
    <message>
        <source>{what} has {found} for its image; expected a tensor (channels x height x width)</source>
        <translation>{what}的图像是 {found}；应为张量（通道 x 高 x 宽）</translation>
    </message>
    <message>
        <source>{what} has a complex-valued image; expected real pixel values</source>
        <translation>{what}的图像是复数值；应为实数像素值</translation>
    </message>
    <message>
        <source>{what} has an image of {count} dimensions ({dims}); expected channels x height x width (or height x width)</source>
        <translation>{what}的图像有 {count} 个维度（{dims}）；应为 通道 x 高 x 宽（或 高 x 宽）</translation>
    </message>
    <message>
        <source>{what} has an image of {dims}, which looks channels-last; give channels x height x width (e.g. image.permute(2, 0, 1))</source>
        <translation>{what}的图像为 {dims}，看起来是 channels-last 排列；请提供 通道 x 高 x 宽（例如 image.permute(2, 0, 1)）</translation>
    </message>
    <message>
        <source>{what} has the label {label} ({type}); expected an int class index</source>
        <translation>{what}的标签为 {label}（{type}）；应为 int 类别索引</translation>
    </message>
    <message>
        <source>{what} has {dtype} pixel values from {low} to {high}; integer images must hold 0..255 (or give floats)</source>
        <translation>{what}的 {dtype} 像素值范围为 {low} 到 {high}；整数图像的值必须在 0..255 之内（或改用浮点数）</translation>
    </message>
    <message>
        <source>its {count:,} images of {dims} need {needed} of host memory to load but {free} is available</source>
        <translation>它的 {count:,} 张 {dims} 图像需要 {needed} 内存才能加载，但只有 {free} 可用</translation>
    </message>
    <message>
        <source>its TensorDataset{where} holds images of {image_dims} and labels of {label_dims}; expected N x channels x height x width (or N x height x width) images and N labels</source>
        <translation>它的 TensorDataset{where}包含 {image_dims} 的图像和 {label_dims} 的标签；应为 N x 通道 x 高 x 宽（或 N x 高 x 宽）的图像和 N 个标签</translation>
    </message>
    <message>
        <source>its TensorDataset{where} holds {dtype} labels; expected int class indices</source>
        <translation>它的 TensorDataset{where}包含 {dtype} 标签；应为 int 类别索引</translation>
    </message>
    <message>
        <source>its TensorDataset{where}</source>
        <translation>它的 TensorDataset{where}</translation>
    </message>
    <message>
        <source>{what} has NaN or infinite pixel values</source>
        <translation>{what}含有 NaN 或无穷大的像素值</translation>
    </message>
    <message>
        <source>dataset {spec}: its float images run from {low:.4g} to {high:.4g}, not 0..1: they are mapped linearly to 0..255 for the 8-bit copy every run trains from (the run normalises them per channel)</source>
        <translation>数据集 {spec}：浮点图像的取值范围是 {low:.4g} 到 {high:.4g}，而不是 0..1：它们被线性映射到 0..255，存成每次运行训练所用的 8 位副本（运行时会按通道归一化）</translation>
    </message>
    <message>
        <source>holds a single item; a run needs at least two (one is held out for validation)</source>
        <translation>只有一项；运行至少需要两项（其中一项留作验证）</translation>
    </message>
    <message>
        <source>its `classes` attribute lists {declared} classes; at most {limit} are supported</source>
        <translation>它的 `classes` 属性列出了 {declared} 个类别；最多支持 {limit} 个</translation>
    </message>
    <message>
        <source>{what} has the label {label}; labels are class indices 0..{last} (at most {limit} classes)</source>
        <translation>{what} 的标签为 {label}；标签是类别序号 0..{last}（最多 {limit} 个类别）</translation>
    </message>
    <message>
        <source>{what} has the label {label}, but the dataset&apos;s `classes` attribute lists {declared} classes (labels 0..{last})</source>
        <translation>{what}的标签为 {label}，但数据集的 `classes` 属性只列出 {declared} 个类别（标签 0..{last}）</translation>
    </message>
    <message>
        <source>every label is 0; a classifier needs at least two classes</source>
        <translation>所有标签都是 0；分类模型至少需要两个类别</translation>
    </message>
    <message>
        <source>{spec}: {problem}</source>
        <translation>{spec}：{problem}</translation>
    </message>
    <message>
        <source> of the {part} split</source>
        <translation>（{part} 划分）</translation>
    </message>
    <message>
        <source>item {index}{where}</source>
        <translation>第 {index} 项{where}</translation>
    </message>
    <message>
        <source>{what} has the label {label}; labels are class indices from 0</source>
        <translation>{what}的标签为 {label}；标签是从 0 开始的类别索引</translation>
    </message>
    <message>
        <source>a scalar</source>
        <translation>标量</translation>
    </message>
    <message>
        <source>Put the files there, or let the app download them (--download on the command line).</source>
        <translation>请把文件放到那里，或让本应用下载（命令行上用 --download）。</translation>
    </message>
    <message>
        <source>{files} (each may also end in .gz)</source>
        <translation>{files}（每个文件也可以带 .gz 后缀）</translation>
    </message>
    <message>
        <source>data folder {root} does not exist. Expected layout for {name}: {layout}. {advice}</source>
        <translation>数据文件夹 {root} 不存在。{name} 的预期目录结构：{layout}。{advice}</translation>
    </message>
    <message>
        <source>data folder {root} is not a folder</source>
        <translation>数据文件夹 {root} 不是文件夹</translation>
    </message>
    <message>
        <source>{name} files not found: missing {missing}. Expected layout: {layout}. {advice}</source>
        <translation>未找到 {name} 文件：缺少 {missing}。预期的目录结构：{layout}。{advice}</translation>
    </message>
    <message>
        <source>cannot download {name}: only {names} can be downloaded</source>
        <translation>无法下载 {name}：只能下载 {names}</translation>
    </message>
    <message>
        <source>could not download {name} into {root}: {reason}. Check the network, or put the files there yourself (expected layout: {layout})</source>
        <translation>无法把 {name} 下载到 {root}：{reason}。请检查网络，或自己把文件放到那里（预期的目录结构：{layout}）</translation>
    </message>
    <message>
        <source>cannot create the folder ({error})</source>
        <translation>无法创建文件夹（{error}）</translation>
    </message>
    <message>
        <source>no answer within {seconds:g} s</source>
        <translation>{seconds:g} s 内无应答</translation>
    </message>
    <message>
        <source>{host}: {reason}</source>
        <translation>{host}：{reason}</translation>
    </message>
    <message>
        <source>image folder {root} does not exist</source>
        <translation>图像文件夹 {root} 不存在</translation>
    </message>
    <message>
        <source>image folder {root} is not a folder</source>
        <translation>图像文件夹 {root} 不是文件夹</translation>
    </message>
    <message>
        <source>{train_dir} and {val_dir} must have the same class folders (only in train: {only_train}; only in val: {only_val})</source>
        <translation>{train_dir} 和 {val_dir} 必须有相同的类别文件夹（仅在 train 中：{only_train}；仅在 val 中：{only_val}）</translation>
    </message>
    <message>
        <source>expected {folder}/&lt;class name&gt;/&lt;image&gt; (for example {example}), or {train_folder}/&lt;class name&gt;/... and {val_folder}/&lt;class name&gt;/...; image types: {types}</source>
        <translation>应为 {folder}/&lt;类别名&gt;/&lt;图像&gt;（例如 {example}），或 {train_folder}/&lt;类别名&gt;/... 与 {val_folder}/&lt;类别名&gt;/...；图像类型：{types}</translation>
    </message>
    <message>
        <source>no class folders in {folder}: {hint}</source>
        <translation>{folder} 中没有类别文件夹：{hint}</translation>
    </message>
    <message>
        <source>only one class folder in {folder} ({name}): classification needs at least two classes, one folder each: {hint}</source>
        <translation>{folder} 中只有一个类别文件夹（{name}）：分类至少需要两个类别，每个类别一个文件夹：{hint}</translation>
    </message>
    <message>
        <source>no images in the class folders {names} of {folder}: {hint}</source>
        <translation>{folder} 的类别文件夹 {names} 中没有图像：{hint}</translation>
    </message>
    <message>
        <source>{path} ({reason})</source>
        <translation>{path}（{reason}）</translation>
    </message>
    <message>
        <source>a folder already scanned</source>
        <translation>已扫描过的文件夹</translation>
    </message>
    <message>
        <source>not a regular file</source>
        <translation>不是普通文件</translation>
    </message>
    <message>
        <source>a broken link</source>
        <translation>失效的链接</translation>
    </message>
    <message>
        <source>a link back into the image folder</source>
        <translation>指回图像文件夹内部的链接</translation>
    </message>
    <message>
        <source>{path} is a symbolic link that loops (it leads back to itself): remove it or point it at a real folder</source>
        <translation>{path} 是循环的符号链接（指回它自己）：请删除它，或让它指向真实的文件夹</translation>
    </message>
    <message>
        <source>path too long for the file system ({length} characters): {path}</source>
        <translation>路径对文件系统来说太长（{length} 个字符）：{path}</translation>
    </message>
    <message>
        <source>cannot read {path}: permission denied</source>
        <translation>无法读取 {path}：权限不足</translation>
    </message>
    <message>
        <source>cannot read {path}: {error}</source>
        <translation>无法读取 {path}：{error}</translation>
    </message>
    <message>
        <source>and {count} more</source>
        <translation>另有 {count} 项</translation>
    </message>
    <message>
        <source>image folder {root}: left out 1 entry: {shown}</source>
        <translation>图像文件夹 {root}：略过了 1 项：{shown}</translation>
    </message>
    <message>
        <source>image folder {root}: left out {count} entries: {shown}</source>
        <translation>图像文件夹 {root}：略过了 {count} 项：{shown}</translation>
    </message>
    <message>
        <source>{path}: not a readable image ({error})</source>
        <translation>{path}：不是可读取的图像（{error}）</translation>
    </message>
    <message>
        <source>{path}: not a regular file</source>
        <translation>{path}：不是普通文件</translation>
    </message>
    <message>
        <source>{path}: images are {found}, expected {expected}</source>
        <translation>{path}：图像为 {found}，应为 {expected}</translation>
    </message>
    <message>
        <source>{path}: holds no images</source>
        <translation>{path}：不含图像</translation>
    </message>
    <message>
        <source>{images_path} holds {images} images but {labels_path} holds {labels} labels</source>
        <translation>{images_path} 有 {images} 张图像，但 {labels_path} 有 {labels} 个标签</translation>
    </message>
    <message>
        <source>{path}: too short to be an IDX file ({size} bytes)</source>
        <translation>{path}：太短，不是 IDX 文件（{size} 字节）</translation>
    </message>
    <message>
        <source>{path}: bad magic number 0x{found:08x}, expected 0x{magic:08x} (not an MNIST IDX file of this kind)</source>
        <translation>{path}：魔数 0x{found:08x} 不对，应为 0x{magic:08x}（不是这种 MNIST IDX 文件）</translation>
    </message>
    <message>
        <source>{path}: truncated header ({size} bytes, expected at least {header})</source>
        <translation>{path}：文件头不完整（{size} 字节，至少应有 {header} 字节）</translation>
    </message>
    <message>
        <source>{path}: truncated: the header says {shape} = {expected} bytes of data, found {actual}</source>
        <translation>{path}：数据不完整：文件头表明数据为 {shape} = {expected} 字节，实际为 {actual}</translation>
    </message>
    <message>
        <source>{path}: has extra bytes: the header says {shape} = {expected} bytes of data, found {actual}</source>
        <translation>{path}：有多余的字节：文件头表明数据为 {shape} = {expected} 字节，实际为 {actual}</translation>
    </message>
    <message>
        <source>placement: the {name} dataset needs {needed} on {device} (with the augmented copy of its training images made each epoch) but only {free} is free for this process (at most {fraction:.0%} may be used for data); use the stream placement (--placement stream)</source>
        <translation>placement：{name} 数据集在 {device} 上需要 {needed}（含每轮生成的训练图像增强副本），但本进程只有 {free} 空闲（最多 {fraction:.0%} 可用于数据）；请使用 stream 放置（--placement stream）</translation>
    </message>
    <message>
        <source>the dataset ({needed}) does not fit in free device memory ({free}): streaming it from the host</source>
        <translation>数据集（{needed}）放不进空闲显存（{free}）：改为从主机流式加载</translation>
    </message>
    <message>
        <source>{cpu} ({threads} threads)</source>
        <translation>{cpu}（{threads} 线程）</translation>
    </message>
    <message>
        <source>Apple GPU (MPS)</source>
        <translation>Apple GPU（MPS）</translation>
    </message>
    <message>
        <source>{spec} is not a device name; use auto, cpu, cuda:N or mps (available: {available})</source>
        <translation>{spec} 不是设备名；请使用 auto、cpu、cuda:N 或 mps（可用：{available}）</translation>
    </message>
    <message>
        <source>{spec} does not exist: the CPU is one device (use cpu)</source>
        <translation>{spec} 不存在：CPU 只算一个设备（请使用 cpu）</translation>
    </message>
    <message>
        <source>{spec} is not available (available: {available})</source>
        <translation>{spec} 不可用（可用：{available}）</translation>
    </message>
    <message>
        <source>mps is not available (available: {available})</source>
        <translation>mps 不可用（可用：{available}）</translation>
    </message>
    <message>
        <source>{spec} does not exist: a Mac has one GPU (use mps)</source>
        <translation>{spec} 不存在：Mac 只有一个 GPU（请使用 mps）</translation>
    </message>
    <message>
        <source>{spec} is not supported; use auto, cpu, cuda:N or mps (available: {available})</source>
        <translation>不支持 {spec}；请使用 auto、cpu、cuda:N 或 mps（可用：{available}）</translation>
    </message>
    <message>
        <source>fp16 needs a CUDA or MPS device; on the CPU use bf16 or off</source>
        <translation>fp16 需要 CUDA 或 MPS 设备；在 CPU 上请使用 bf16 或 off</translation>
    </message>
    <message>
        <source>{gpu} does not support bf16; use fp16 or off</source>
        <translation>{gpu} 不支持 bf16；请使用 fp16 或 off</translation>
    </message>
    <message>
        <source>this macOS/MPS build does not support bf16; use fp16 or off</source>
        <translation>此 macOS/MPS 版本不支持 bf16；请使用 fp16 或 off</translation>
    </message>
    <message>
        <source>data-parallel runs train on CUDA GPUs or CPU processes, not {kind}</source>
        <translation>数据并行运行只能在 CUDA GPU 或 CPU 进程上训练，不支持 {kind}</translation>
    </message>
    <message>
        <source>rank {rank} needs GPU cuda:{local_rank}, but this machine has {count} GPU; start at most {count} processes per machine</source>
        <translation>进程 {rank} 需要 GPU cuda:{local_rank}，但本机只有 {count} 个 GPU；每台机器最多启动 {count} 个进程</translation>
    </message>
    <message>
        <source>rank {rank} needs GPU cuda:{local_rank}, but this machine has {count} GPUs; start at most {count} processes per machine</source>
        <translation>进程 {rank} 需要 GPU cuda:{local_rank}，但本机只有 {count} 个 GPU；每台机器最多启动 {count} 个进程</translation>
    </message>
    <message>
        <source>rank {rank} ({device}) ran out of memory at step {step}: {problem}</source>
        <translation>进程 {rank}（{device}）在第 {step} 步显存不足：{problem}</translation>
    </message>
    <message>
        <source>{field}: {detail}</source>
        <translation>{field}：{detail}</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无</translation>
    </message>
    <message>
        <source>starting: {model} on {device}, {dataset}, batch {batch_size}</source>
        <translation>开始：在 {device} 上训练 {model}，数据集 {dataset}，批大小 {batch_size}</translation>
    </message>
    <message>
        <source>1 step</source>
        <translation>1 步</translation>
    </message>
    <message>
        <source>{steps:,} steps</source>
        <translation>{steps:,} 步</translation>
    </message>
    <message>
        <source>{steps} over as many epochs as that takes</source>
        <translation>{steps}，轮数按需而定</translation>
    </message>
    <message>
        <source>{steps} over 1 epoch</source>
        <translation>1 轮共 {steps}</translation>
    </message>
    <message>
        <source>{steps} over {epochs:,} epochs</source>
        <translation>{epochs:,} 轮共 {steps}</translation>
    </message>
    <message>
        <source>its own loop (the watch API)</source>
        <translation>其自己的循环（watch API）</translation>
    </message>
    <message>
        <source>an unchanged script (watch --)</source>
        <translation>未改动的脚本（watch --）</translation>
    </message>
    <message>
        <source>Lightning&apos;s Trainer</source>
        <translation>Lightning 的 Trainer</translation>
    </message>
    <message>
        <source>the transformers Trainer</source>
        <translation>transformers 的 Trainer</translation>
    </message>
    <message>
        <source>its number of steps not known in advance</source>
        <translation>事先不知道步数</translation>
    </message>
    <message>
        <source>watching {model} on {device} ({device_name}): {parameters:,} parameters, {source}, {plan}</source>
        <translation>正在观察 {device}（{device_name}）上的 {model}：{parameters:,} 个参数，{source}，{plan}</translation>
    </message>
    <message>
        <source>training {model} on {device} ({device_name}): {parameters:,} parameters, {dataset} ({train:,} train / {val:,} val sequences of {seq_len:,} tokens, {size}), {placement} placement, batch {batch_size}, {plan}</source>
        <translation>在 {device}（{device_name}）上训练 {model}：{parameters:,} 个参数，{dataset}（训练序列 {train:,} 个 / 验证序列 {val:,} 个，每个 {seq_len:,} 词元，{size}），数据放置 {placement}，批大小 {batch_size}，{plan}</translation>
    </message>
    <message>
        <source>training {model} on {device} ({device_name}): {parameters:,} parameters, {dataset} ({train:,} train / {val:,} val images, {size}), {placement} placement, batch {batch_size}, {plan}</source>
        <translation>在 {device}（{device_name}）上训练 {model}：{parameters:,} 个参数，{dataset}（训练图像 {train:,} 张 / 验证图像 {val:,} 张，{size}），数据放置 {placement}，批大小 {batch_size}，{plan}</translation>
    </message>
    <message>
        <source>{started} (resumed at step {step:,})</source>
        <translation>{started}（从第 {step:,} 步恢复）</translation>
    </message>
    <message>
        <source>{rate:,.0f} tokens/s</source>
        <translation>{rate:,.0f} 词元/秒</translation>
    </message>
    <message>
        <source>{rate:,.0f} samples/s</source>
        <translation>{rate:,.0f} 样本/秒</translation>
    </message>
    <message>
        <source>epoch {epoch}: train loss {train_loss}, val loss {val_loss}, val accuracy {val_accuracy}</source>
        <translation>第 {epoch} 轮：训练损失 {train_loss}，验证损失 {val_loss}，验证准确率 {val_accuracy}</translation>
    </message>
    <message>
        <source>cache cleared at rest: {freed} freed, reserved now {reserved}</source>
        <translation>未运行时清空缓存：释放 {freed}，当前已保留 {reserved}</translation>
    </message>
    <message>
        <source>cache cleared at step {step}: {freed} freed, reserved now {reserved}</source>
        <translation>第 {step} 步清空缓存：释放 {freed}，当前已保留 {reserved}</translation>
    </message>
    <message>
        <source>cleared {freed}</source>
        <translation>已释放 {freed}</translation>
    </message>
    <message>
        <source>memory snapshot saved to {path} ({size}) at step {step}: open it at {url}</source>
        <translation>第 {step} 步的显存快照已保存到 {path}（{size}）：可在 {url} 打开</translation>
    </message>
    <message>
        <source>end of epoch {epoch}</source>
        <translation>第 {epoch} 轮结束</translation>
    </message>
    <message>
        <source>periodic</source>
        <translation>定期</translation>
    </message>
    <message>
        <source>requested</source>
        <translation>按请求</translation>
    </message>
    <message>
        <source>the run stopped</source>
        <translation>运行已停止</translation>
    </message>
    <message>
        <source>the run ended mid-epoch</source>
        <translation>运行在一轮中途结束</translation>
    </message>
    <message>
        <source>checkpoint saved at step {step} ({why}): {path} ({size})</source>
        <translation>第 {step} 步的检查点已保存（{why}）：{path}（{size}）</translation>
    </message>
    <message>
        <source>Out of memory during validation</source>
        <translation>验证时显存不足</translation>
    </message>
    <message>
        <source>Out of memory during training</source>
        <translation>训练时显存不足</translation>
    </message>
    <message>
        <source>{problem} (during validation)</source>
        <translation>{problem}（验证期间）</translation>
    </message>
    <message>
        <source>measured at step {step}</source>
        <translation>第 {step} 步实测</translation>
    </message>
    <message>
        <source>predicted for batch {batch}</source>
        <translation>按批大小 {batch} 预测</translation>
    </message>
    <message>
        <source>not even batch 1 is predicted to fit</source>
        <translation>预测连批大小 1 也放不下</translation>
    </message>
    <message>
        <source>batch {batch} is predicted to fit</source>
        <translation>预测批大小 {batch} 可以放下</translation>
    </message>
    <message>
        <source>largest holders by module ({source}): {holders}</source>
        <translation>按模块占用最多的（{source}）：{holders}</translation>
    </message>
    <message>
        <source>{batch_size} (requested {requested}; halved {halvings}x after out of memory, {skipped} images left out)</source>
        <translation>{batch_size}（请求的是 {requested}；因显存不足减半 {halvings} 次，{skipped} 张图像未参与训练）</translation>
    </message>
    <message>
        <source>{batch_size} (requested {requested}; halved {halvings}x after out of memory)</source>
        <translation>{batch_size}（请求的是 {requested}；因显存不足减半 {halvings} 次）</translation>
    </message>
    <message>
        <source>trained 1 step (step {last:,})</source>
        <translation>训练了 1 步（第 {last:,} 步）</translation>
    </message>
    <message>
        <source>trained {steps:,} steps (steps {first:,}-{last:,})</source>
        <translation>训练了 {steps:,} 步（第 {first:,}-{last:,} 步）</translation>
    </message>
    <message>
        <source>{rate:,.0f} images/s</source>
        <translation>{rate:,.0f} 图像/秒</translation>
    </message>
    <message>
        <source>finished: {steps} in {wall_s:.1f} s, {rate}, peak {peak}, batch size {batch_size}</source>
        <translation>完成：{steps}，用时 {wall_s:.1f} 秒，{rate}，峰值 {peak}，批大小 {batch_size}</translation>
    </message>
    <message>
        <source>finished: {steps} in {wall_s:.1f} s, {rate}, peak {peak}</source>
        <translation>完成：{steps}，用时 {wall_s:.1f} 秒，{rate}，峰值 {peak}</translation>
    </message>
    <message>
        <source>finished: {steps} steps in {wall_s:.1f} s, {rate}, peak {peak}, batch size {batch_size}</source>
        <translation>完成：{steps} 步，用时 {wall_s:.1f} s，{rate}，峰值 {peak}，批大小 {batch_size}</translation>
    </message>
    <message>
        <source>finished: {steps} steps in {wall_s:.1f} s, {rate}, peak {peak}</source>
        <translation>完成：{steps} 步，用时 {wall_s:.1f} s，{rate}，峰值 {peak}</translation>
    </message>
    <message>
        <source>stopped at step {step}</source>
        <translation>在第 {step} 步停止</translation>
    </message>
    <message>
        <source>{status}: {message}</source>
        <translation>{status}：{message}</translation>
    </message>
    <message>
        <source>cuDNN&apos;s autotuner runs on CUDA devices only, not on {device}; untick it (it would change nothing here)</source>
        <translation>cuDNN 的自动调优只在 CUDA 设备上运行，不在 {device} 上运行；请取消勾选（它在这里不起作用）</translation>
    </message>
    <message>
        <source>torch.compile does not support Python {python} on {platform} with torch {torch}; run without compile</source>
        <translation>torch.compile 不支持 {platform} 上的 Python {python} 搭配 torch {torch}；请不用 compile 运行</translation>
    </message>
    <message>
        <source>torch.compile needs a C++ compiler for the CPU (g++ or clang++; none found on PATH or in $CXX); install one (e.g. apt install g++) or run without compile</source>
        <translation>torch.compile 在 CPU 上需要 C++ 编译器（g++ 或 clang++；在 PATH 和 $CXX 中都没找到）；请安装一个（例如 apt install g++），或不用 compile 运行</translation>
    </message>
    <message>
        <source>torch.compile needs Triton for CUDA and it is missing or does not support this GPU; pip install triton, or run without compile</source>
        <translation>torch.compile 在 CUDA 上需要 Triton，但它缺失或不支持这块 GPU；请 pip install triton，或不用 compile 运行</translation>
    </message>
    <message>
        <source>torch has no fused optimizer for {device} ({error}); untick it</source>
        <translation>torch 没有适用于 {device} 的融合优化器（{error}）；请取消勾选</translation>
    </message>
    <message>
        <source>cuda was asked for, but this machine has no CUDA GPU; use --device cpu</source>
        <translation>请求了 cuda，但本机没有 CUDA GPU；请使用 --device cpu</translation>
    </message>
    <message>
        <source>{n} processes need {n} GPUs, but this machine has {count}; use --nproc {count} or fewer (one process per GPU)</source>
        <translation>{n} 个进程需要 {n} 个 GPU，但本机只有 {count} 个；请使用 --nproc {count} 或更少（每个 GPU 一个进程）</translation>
    </message>
    <message>
        <source>{n} CPU processes on {cores} CPU cores: each process trains on its own core at least; use --nproc {cores} or fewer (or --device cuda on a GPU machine)</source>
        <translation>在 {cores} 个 CPU 核心上运行 {n} 个 CPU 进程：每个进程至少要独占一个核心来训练；请使用 --nproc {cores} 或更少（或在有 GPU 的机器上使用 --device cuda）</translation>
    </message>
    <message>
        <source>rank {rank} ended the run ({status}): {message}</source>
        <translation>进程 {rank} 结束了运行（{status}）：{message}</translation>
    </message>
    <message>
        <source>rank {rank} stopped responding: the other ranks timed out waiting for it in a collective (--dist-timeout), and it was ended</source>
        <translation>进程 {rank} 停止响应：其他进程在集合通信中等待它超时（--dist-timeout），它已被终止</translation>
    </message>
    <message>
        <source>rank {rank} (pid {pid}) {how}</source>
        <translation>进程 {rank}（pid {pid}）{how}</translation>
    </message>
    <message>
        <source>rank {rank} ended without a word (killed, or its process crashed), and the others lost their connection to it</source>
        <translation>进程 {rank} 未留下任何信息便结束了（被终止，或崩溃），其他进程与它失去了连接</translation>
    </message>
    <message>
        <source>rank {rank} (pid {pid}) {how}: {message}</source>
        <translation>进程 {rank}（pid {pid}）{how}：{message}</translation>
    </message>
    <message>
        <source>was killed by {signal}</source>
        <translation>被 {signal} 终止</translation>
    </message>
    <message>
        <source>exited with code {code}</source>
        <translation>以退出码 {code} 退出</translation>
    </message>
    <message>
        <source>the loss rose from {first:.4g} to {latest:.4g} by step {step}: the run is not converging; try a lower learning rate</source>
        <translation>到第 {step} 步时损失已从 {first:.4g} 升至 {latest:.4g}：训练没有收敛；请尝试更低的学习率</translation>
    </message>
    <message>
        <source>unknown model {name}; `gpu-train-monitor models` lists the available ones</source>
        <translation>未知模型 {name}；`gpu-train-monitor models` 会列出可用的模型</translation>
    </message>
    <message>
        <source>{name} cannot be built as a {classes}-class classifier: {error}</source>
        <translation>无法把 {name} 构建为 {classes} 类分类模型：{error}</translation>
    </message>
    <message>
        <source>at step {step}</source>
        <translation>在第 {step} 步</translation>
    </message>
    <message>
        <source>during validation after epoch {epoch}</source>
        <translation>在第 {epoch} 轮之后的验证中</translation>
    </message>
    <message>
        <source>out of memory {where} with batch size {batch_size}: asked for {requested}, {free} free, {unallocated} reserved but unallocated</source>
        <translation>{where}显存不足，批大小 {batch_size}：请求 {requested}，空闲 {free}，已保留但未分配 {unallocated}</translation>
    </message>
    <message>
        <source>out of memory {where} with batch size {batch_size}, {free} free, {unallocated} reserved but unallocated</source>
        <translation>{where}显存不足，批大小 {batch_size}，空闲 {free}，已保留但未分配 {unallocated}</translation>
    </message>
    <message>
        <source>the process is limited to {limit} of address space by ulimit -v (RLIMIT_AS), which counts mapped libraries too, not only resident memory</source>
        <translation>本进程的地址空间被 ulimit -v（RLIMIT_AS）限制为 {limit}，其中也计入映射的库，而不只是常驻内存</translation>
    </message>
    <message>
        <source>the process is limited to {limit} of data by ulimit -d (RLIMIT_DATA)</source>
        <translation>本进程的数据段被 ulimit -d（RLIMIT_DATA）限制为 {limit}</translation>
    </message>
    <message>
        <source>the process&apos;s control group is limited to {limit} (cgroup memory.max, shared by the group&apos;s processes)</source>
        <translation>本进程所在的控制组被限制为 {limit}（cgroup memory.max，组内所有进程共用）</translation>
    </message>
    <message>
        <source>out of memory {where} with batch size {batch_size}: asked for {requested}</source>
        <translation>{where}内存不足，批大小 {batch_size}：请求了 {requested}</translation>
    </message>
    <message>
        <source>out of memory {where} with batch size {batch_size}</source>
        <translation>{where}内存不足，批大小 {batch_size}</translation>
    </message>
    <message>
        <source>{asked}, more than the process&apos;s limit had left at that moment</source>
        <translation>{asked}，超过了进程限制当时剩余的量</translation>
    </message>
    <message>
        <source>{asked}; {free} of system memory available once the failed step&apos;s memory was given back</source>
        <translation>{asked}；释放失败步骤的内存后，系统内存可用 {free}</translation>
    </message>
    <message>
        <source>{asked}; {limit}, {free} of it left once the failed step&apos;s memory was given back</source>
        <translation>{asked}；{limit}，释放失败步骤的内存后还剩 {free}</translation>
    </message>
    <message>
        <source>{problem}; continuing with batch size {batch_size}</source>
        <translation>{problem}；以批大小 {batch_size} 继续</translation>
    </message>
    <message>
        <source>try a smaller batch size or --on-oom shrink</source>
        <translation>请尝试更小的批大小或 --on-oom shrink</translation>
    </message>
    <message>
        <source>batch size 1 does not fit</source>
        <translation>批大小为 1 也放不下</translation>
    </message>
    <message>
        <source>gave up after {retries} halvings</source>
        <translation>减半 {retries} 次后已放弃</translation>
    </message>
    <message>
        <source>{problem}; {hint}</source>
        <translation>{problem}；{hint}</translation>
    </message>
    <message>
        <source>{path} is a folder; give a file name</source>
        <translation>{path} 是一个文件夹；请给出文件名</translation>
    </message>
    <message>
        <source>cannot write to {path} ({why})</source>
        <translation>无法写入 {path}（{why}）</translation>
    </message>
    <message>
        <source>the folder for {path} does not exist</source>
        <translation>{path} 所在的文件夹不存在</translation>
    </message>
    <message>
        <source>the run store</source>
        <translation>运行记录库</translation>
    </message>
    <message>
        <source>{path} is also given to {option}; give each output a file of its own</source>
        <translation>{path} 也被用于 {option}；请为每个输出指定各自的文件</translation>
    </message>
    <message>
        <source>the checkpoint being resumed</source>
        <translation>正在恢复的检查点</translation>
    </message>
    <message>
        <source>the dataset&apos;s folder</source>
        <translation>数据集文件夹</translation>
    </message>
    <message>
        <source>your model&apos;s code</source>
        <translation>你的模型代码</translation>
    </message>
    <message>
        <source>your dataset&apos;s code</source>
        <translation>你的数据集代码</translation>
    </message>
    <message>
        <source>give a ready-made comparison or --vs lines, not both</source>
        <translation>请给出一个现成对比或 --vs 行，不要两者都给</translation>
    </message>
    <message>
        <source>{path} is a file of {option} ({what}); give another path</source>
        <translation>{path} 是 {option}（{what}）的一个文件；请给出另一个路径</translation>
    </message>
    <message>
        <source>{path} is the same file as {option} ({what}); give another path</source>
        <translation>{path} 与 {option}（{what}）是同一个文件；请给出另一个路径</translation>
    </message>
    <message>
        <source>{path} is a file of {what}; give another path</source>
        <translation>{path} 是{what}的一个文件；请给出另一个路径</translation>
    </message>
    <message>
        <source>{path} is {what}; give another path</source>
        <translation>{path} 是{what}；请给出另一个路径</translation>
    </message>
    <message>
        <source>the fastest configuration offered: speedrun-net (a small CIFAR net in the style of airbench) on a CIFAR-sized synthetic set kept on the device, bf16, channels_last, torch.compile, fused optimizer, batch 1024 (on a CPU: fp32 and no compile)</source>
        <translation>所提供的最快配置：speedrun-net（airbench 风格的小型 CIFAR 网络），在常驻设备、CIFAR 大小的合成数据集上训练，bf16、channels_last、torch.compile、融合优化器、批大小 1024（在 CPU 上：fp32，不编译）</translation>
    </message>
    <message>
        <source>unknown preset {name}; known: {known}</source>
        <translation>未知预设 {name}；已有：{known}</translation>
    </message>
    <message>
        <source>the ranks ended without a result</source>
        <translation>各进程结束时没有给出结果</translation>
    </message>
    <message>
        <source>the ranks could not be started: {kind}: {error}</source>
        <translation>无法启动各进程：{kind}: {error}</translation>
    </message>
    <message>
        <source>your own dataset: {train:,} training and {val:,} validation images of {shape}, {classes} classes; each epoch crops them at random (up to {pad} px) and flips them, and every batch is normalised per channel by the training images&apos; mean and std</source>
        <translation>你自己的数据集：{train:,} 张训练图像和 {val:,} 张验证图像，尺寸为 {shape}，{classes} 个类别；每轮对它们做随机裁剪（最多 {pad} px）和翻转，每个批次按训练图像的均值和标准差逐通道归一化</translation>
    </message>
    <message>
        <source>your own dataset: {train:,} training and {val:,} validation images of {shape}, {classes} classes; each epoch crops them at random (up to {pad} px), and every batch is normalised per channel by the training images&apos; mean and std</source>
        <translation>你自己的数据集：{train:,} 张训练图像和 {val:,} 张验证图像，尺寸为 {shape}，{classes} 个类别；每轮对它们做随机裁剪（最多 {pad} px），每个批次按训练图像的均值和标准差逐通道归一化</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>diverged</source>
        <translation>已发散</translation>
    </message>
    <message>
        <source>oom</source>
        <translation>显存不足</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>the loss became {loss} at step {step}; lower the learning rate or use --amp off</source>
        <translation>第 {step} 步的损失变为 {loss}；请降低学习率或使用 --amp off</translation>
    </message>
    <message>
        <source>the run ended after {step} of {total_steps} planned steps</source>
        <translation>运行在计划的 {total_steps} 步中只完成了 {step} 步就结束了</translation>
    </message>
    <message>
        <source>your code called {call}; to end a run with an error, raise an exception</source>
        <translation>你的代码调用了 {call}；若要以错误结束运行，请抛出异常</translation>
    </message>
    <message>
        <source>stopped by request</source>
        <translation>按请求停止</translation>
    </message>
    <message>
        <source>an operation&apos;s result depends on the values in the batch ({op})</source>
        <translation>某个运算的结果取决于批次中的数值（{op}）</translation>
    </message>
    <message>
        <source>the operation {op} has no implementation for tensors without memory</source>
        <translation>运算 {op} 没有针对无内存张量的实现</translation>
    </message>
    <message>
        <source>{kind}: {error}</source>
        <translation>{kind}: {error}</translation>
    </message>
    <message>
        <source>the memory of {what} cannot be predicted without running it: {reason}; real trial steps measure it instead</source>
        <translation>不运行就无法预测 {what} 的内存：{reason}；改由真实的试验步骤来测量</translation>
    </message>
    <message>
        <source>this training step</source>
        <translation>这个训练步骤</translation>
    </message>
    <message>
        <source>recording stopped: {problem}; the run goes on unrecorded</source>
        <translation>记录已停止：{problem}；运行继续，但不再记录</translation>
    </message>
    <message>
        <source>this run is not recorded: {problem}</source>
        <translation>本次运行不会被记录：{problem}</translation>
    </message>
    <message>
        <source>the process recording it ended without finishing it (killed or crashed); steps up to its last report are kept</source>
        <translation>记录它的进程在运行结束前就退出了（被终止或崩溃）；截至最后一次报告的步骤已保留</translation>
    </message>
    <message>
        <source>{path} is not a run store: {error}; give --runs-db a new file name</source>
        <translation>{path} 不是运行记录库：{error}；请为 --runs-db 指定一个新文件名</translation>
    </message>
    <message>
        <source>the run store {path} was written by a newer version of this app ({error}); use that version or another --runs-db</source>
        <translation>运行记录库 {path} 由本应用的更新版本写入（{error}）；请使用该版本，或另一个 --runs-db</translation>
    </message>
    <message>
        <source>the run store {path} is locked by another process (it stayed busy for {seconds:.0f} s)</source>
        <translation>运行记录库 {path} 被另一个进程锁定（持续忙碌了 {seconds:.0f} s）</translation>
    </message>
    <message>
        <source>the run store {path} is writable but its {sidecar} file is read-only; with the app and every run closed, delete {sidecar}</source>
        <translation>运行记录库 {path} 可写，但它的 {sidecar} 文件是只读的；请在关闭本应用和所有运行后删除 {sidecar}</translation>
    </message>
    <message>
        <source>the run store {path} is read-only; choose a writable file with --runs-db</source>
        <translation>运行记录库 {path} 是只读的；请用 --runs-db 选择一个可写的文件</translation>
    </message>
    <message>
        <source>the disk holding the run store {path} is full</source>
        <translation>存放运行记录库 {path} 的磁盘已满</translation>
    </message>
    <message>
        <source>the run store {path} is damaged ({error}); with the app closed, move it aside together with its -wal and -shm files and a new one is started</source>
        <translation>运行记录库 {path} 已损坏（{error}）；请在关闭本应用后将它连同 -wal 和 -shm 文件一起移走，之后会新建一个</translation>
    </message>
    <message>
        <source>the run store {path} cannot be opened ({error}); check the folder exists and is writable</source>
        <translation>无法打开运行记录库 {path}（{error}）；请检查文件夹是否存在且可写</translation>
    </message>
    <message>
        <source>the run store {path} failed: {error}</source>
        <translation>运行记录库 {path} 出错：{error}</translation>
    </message>
    <message>
        <source>no run {run_id} in {path}</source>
        <translation>{path} 中没有运行 {run_id}</translation>
    </message>
    <message>
        <source>unable to open database file (it does not exist)</source>
        <translation>无法打开数据库文件（文件不存在）</translation>
    </message>
    <message>
        <source>the file is read-only</source>
        <translation>该文件是只读的</translation>
    </message>
    <message>
        <source>it is still being created, or has an older schema that opening it for writing migrates</source>
        <translation>它仍在创建中，或者结构版本较旧（以写入方式打开时会迁移）</translation>
    </message>
    <message>
        <source>it is still being created (no tables yet)</source>
        <translation>它仍在创建中（还没有表）</translation>
    </message>
    <message>
        <source>epoch {epoch} produced no batch</source>
        <translation>第 {epoch} 轮没有产生任何批次</translation>
    </message>
    <message>
        <source>torch.compile compiled the model in {seconds:.1f} s (the first step; counted in the wall time, left out of images/s)</source>
        <translation>torch.compile 编译模型用时 {seconds:.1f} s（在第一步中；计入总用时，不计入图像/秒）</translation>
    </message>
    <message>
        <source>the CPU has no caching allocator: nothing to clear</source>
        <translation>CPU 没有缓存分配器：没有可清空的缓存</translation>
    </message>
    <message>
        <source>memory history is recorded by the CUDA caching allocator; {device_type} has none</source>
        <translation>显存历史由 CUDA 缓存分配器记录；{device_type} 没有这种分配器</translation>
    </message>
    <message>
        <source>this PyTorch build cannot record memory history (needs torch &gt;= 2.1)</source>
        <translation>此 PyTorch 版本无法记录显存历史（需要 torch &gt;= 2.1）</translation>
    </message>
    <message>
        <source>memory snapshot: {reason}</source>
        <translation>显存快照：{reason}</translation>
    </message>
    <message>
        <source>memory snapshot: cannot write {path}: {why}</source>
        <translation>显存快照：无法写入 {path}：{why}</translation>
    </message>
    <message>
        <source>no memory history is being recorded in this run: snapshot not saved</source>
        <translation>本次运行没有记录显存历史：快照未保存</translation>
    </message>
    <message>
        <source>torch.compile could not compile {model} ({kind}: {error}); run without compile</source>
        <translation>torch.compile 无法编译 {model}（{kind}: {error}）；请不使用 compile 运行</translation>
    </message>
    <message>
        <source>its schema version is {found}, this app knows up to {known}</source>
        <translation>其结构版本为 {found}，本应用最高只支持 {known}</translation>
    </message>
    <message>
        <source>it is an SQLite database of another program (it is neither empty nor marked as a run store)</source>
        <translation>它是另一个程序的 SQLite 数据库（既不是空文件，也没有运行记录库的标记）</translation>
    </message>
    <message>
        <source>not loaded yet</source>
        <translation>尚未加载</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>NVIDIA driver</source>
        <translation>NVIDIA 驱动</translation>
    </message>
    <message>
        <source>OS</source>
        <translation>操作系统</translation>
    </message>
    <message>
        <source>none (a CPU-only build of torch)</source>
        <translation>无（仅支持 CPU 的 torch 版本）</translation>
    </message>
    <message>
        <source>{version} (no GPU available)</source>
        <translation>{version}（无可用 GPU）</translation>
    </message>
    <message>
        <source>{version} (GPU available: 1 device)</source>
        <translation>{version}（GPU 可用：1 个设备）</translation>
    </message>
    <message>
        <source>{version} (GPU available: {count} devices)</source>
        <translation>{version}（GPU 可用：{count} 个设备）</translation>
    </message>
    <message>
        <source>none (no NVIDIA driver found)</source>
        <translation>无（未找到 NVIDIA 驱动）</translation>
    </message>
    <message>
        <source>{driver} (supports CUDA {cuda})</source>
        <translation>{driver}（支持 CUDA {cuda}）</translation>
    </message>
    <message>
        <source>not installed</source>
        <translation>未安装</translation>
    </message>
    <message>
        <source>unknown ({error})</source>
        <translation>未知（{error}）</translation>
    </message>
    <message>
        <source>no module before the colon</source>
        <translation>冒号前没有模块</translation>
    </message>
    <message>
        <source>no callable&apos;s name after the colon</source>
        <translation>冒号后没有可调用对象的名称</translation>
    </message>
    <message>
        <source>{name} after the colon is not a Python name</source>
        <translation>冒号后的 {name} 不是合法的 Python 名称</translation>
    </message>
    <message>
        <source>{name} before the colon is neither a module name nor a .py file</source>
        <translation>冒号前的 {name} 既不是模块名，也不是 .py 文件</translation>
    </message>
    <message>
        <source>{value} is not {spec_form} (e.g. {module_example} or {file_example}): {problem}</source>
        <translation>{value} 不是 {spec_form} 形式（例如 {module_example} 或 {file_example}）：{problem}</translation>
    </message>
    <message>
        <source>cannot use {path}: {error}</source>
        <translation>无法使用 {path}：{error}</translation>
    </message>
    <message>
        <source>{spec}: {owner} (imported from {source}) has no attribute {attribute}</source>
        <translation>{spec}：{owner}（从 {source} 导入）没有属性 {attribute}</translation>
    </message>
    <message>
        <source>{spec}: {owner} has no attribute {attribute}</source>
        <translation>{spec}：{owner} 没有属性 {attribute}</translation>
    </message>
    <message>
        <source>a model instance (an nn.Module)</source>
        <translation>模型实例（nn.Module）</translation>
    </message>
    <message>
        <source>{spec} is {what}, not a callable: point at a function or class that returns a new model</source>
        <translation>{spec} 是 {what}，不是可调用对象：请指向一个返回新模型的函数或类</translation>
    </message>
    <message>
        <source>{spec} is {what}, not a callable: point at a function or class that returns a new dataset</source>
        <translation>{spec} 是 {what}，不是可调用对象：请指向一个返回新数据集的函数或类</translation>
    </message>
    <message>
        <source>{spec} raised {error}</source>
        <translation>{spec} 抛出了 {error}</translation>
    </message>
    <message>
        <source>{spec} needs the argument {names}, but a run calls it with no arguments; give it a default</source>
        <translation>{spec} 需要参数 {names}，但运行调用它时不传任何参数；请给该参数设默认值</translation>
    </message>
    <message>
        <source>{spec} needs the arguments {names}, but a run calls it with no arguments; give them a default</source>
        <translation>{spec} 需要参数 {names}，但运行调用它时不传任何参数；请给这些参数设默认值</translation>
    </message>
    <message>
        <source>{spec} needs the argument {names}, but a run calls it with {offered} (when it takes them); give it a default</source>
        <translation>{spec} 需要参数 {names}，但运行只会传入 {offered}（在它接受时）；请给该参数设默认值</translation>
    </message>
    <message>
        <source>{spec} needs the arguments {names}, but a run calls it with {offered} (when it takes them); give them a default</source>
        <translation>{spec} 需要参数 {names}，但运行只会传入 {offered}（在它接受时）；请给这些参数设默认值</translation>
    </message>
    <message>
        <source>an {type}</source>
        <translation>{type} 对象</translation>
    </message>
    <message>
        <source>a {type}</source>
        <translation>{type} 对象</translation>
    </message>
    <message>
        <source>sys.exit({code})</source>
        <translation>sys.exit({code})</translation>
    </message>
    <message>
        <source>sys.exit({code}) in {function} ({file}, line {line})</source>
        <translation>sys.exit({code})，位于 {function}（{file}，第 {line} 行）</translation>
    </message>
    <message>
        <source>{spec}: {path} cannot be imported as a Python module</source>
        <translation>{spec}：{path} 无法作为 Python 模块导入</translation>
    </message>
    <message>
        <source>{spec}: importing {name} failed: {error}</source>
        <translation>{spec}：导入 {name} 失败：{error}</translation>
    </message>
    <message>
        <source>no module named {name} in the current folder ({folder}) or on the Python path</source>
        <translation>在当前文件夹（{folder}）和 Python 路径中都没有名为 {name} 的模块</translation>
    </message>
    <message>
        <source>no file {path}</source>
        <translation>没有文件 {path}</translation>
    </message>
    <message>
        <source>no file {path} (relative to the current folder, {folder})</source>
        <translation>没有文件 {path}（相对于当前文件夹 {folder}）</translation>
    </message>
    <message>
        <source>{spec} returned {what}, not a torch.nn.Module</source>
        <translation>{spec} 返回了 {what}，而不是 torch.nn.Module</translation>
    </message>
    <message>
        <source>{spec} returned a model without trainable parameters: there is nothing to train</source>
        <translation>{spec} 返回的模型没有可训练的参数：没有东西可训练</translation>
    </message>
    <message>
        <source>it called {call}</source>
        <translation>它调用了 {call}</translation>
    </message>
    <message>
        <source>{spec} fails on the run&apos;s input, a batch shaped {shape} (batch x channels x height x width, from the dataset): {error}</source>
        <translation>{spec} 处理本次运行的输入时出错，输入是形状为 {shape} 的批次（批次 x 通道 x 高 x 宽，来自数据集）：{error}</translation>
    </message>
    <message>
        <source>{spec}: the model returned {what}, expected a tensor of logits shaped (batch, {classes})</source>
        <translation>{spec}：模型返回了 {what}，应为形状为 (batch, {classes}) 的 logits 张量</translation>
    </message>
    <message>
        <source>{spec}: the model gives {outputs} outputs per image but the dataset has {classes} classes; give it {wanted} outputs (the factory is called with num_classes= when it takes that argument)</source>
        <translation>{spec}：模型对每张图像给出 {outputs} 个输出，但数据集有 {classes} 个类别；请让它输出 {wanted} 个值（工厂函数接受 num_classes= 参数时，调用时会传入）</translation>
    </message>
    <message>
        <source>{spec}: the model&apos;s output for a batch shaped {shape} is {found}, expected {expected} (one logit per class for each image)</source>
        <translation>{spec}：对形状为 {shape} 的批次，模型输出为 {found}，应为 {expected}（每张图像每个类别一个 logit）</translation>
    </message>
    <message>
        <source>{first}; {second}</source>
        <translation>{first}；{second}</translation>
    </message>
    <message>
        <source>{first} and {second}</source>
        <translation>{first} 和 {second}</translation>
    </message>
    <message>
        <source>{spec} is not on this machine; it has {present} (or auto)</source>
        <translation>本机上没有 {spec}；本机有 {present}（或 auto）</translation>
    </message>
    <message>
        <source>Processes</source>
        <translation>进程数</translation>
    </message>
    <message>
        <source>GPUs training together, one process each: data-parallel processes (torch.distributed): each step&apos;s batch is split evenly over them (1 to {gpus} here)</source>
        <translation>一起训练的 GPU，每块一个进程：数据并行进程（torch.distributed），每步的批次平均分给它们（本机可设 1 到 {gpus}）</translation>
    </message>
    <message>
        <source>CPU processes</source>
        <translation>CPU 进程数</translation>
    </message>
    <message>
        <source>CPU processes training together: data-parallel processes (torch.distributed): each step&apos;s batch is split evenly over them (1 to {cores}, this machine&apos;s cores)</source>
        <translation>一起训练的 CPU 进程：数据并行进程（torch.distributed），每步的批次平均分给它们（1 到 {cores}，即本机的核心数）</translation>
    </message>
    <message>
        <source>{nproc} asked, but this machine has {limit} GPUs; use 1 to {limit}</source>
        <translation>要求 {nproc} 个，但本机只有 {limit} 块 GPU；请使用 1 到 {limit}</translation>
    </message>
    <message>
        <source>{nproc} asked, but this machine has {limit} CPU cores; use 1 to {limit}</source>
        <translation>要求 {nproc} 个，但本机只有 {limit} 个 CPU 核心；请使用 1 到 {limit}</translation>
    </message>
    <message>
        <source>cannot use {path}: {reason}</source>
        <translation>无法使用 {path}：{reason}</translation>
    </message>
    <message>
        <source>the folder {path} does not exist (choose another, or tick download)</source>
        <translation>文件夹 {path} 不存在（请选择其他文件夹，或勾选“下载”）</translation>
    </message>
    <message>
        <source>{path} is a file, not a folder; choose the folder that holds the dataset</source>
        <translation>{path} 是文件而不是文件夹；请选择存放数据集的文件夹</translation>
    </message>
    <message>
        <source>cannot read {path}: {reason}</source>
        <translation>无法读取 {path}：{reason}</translation>
    </message>
    <message>
        <source>unknown model {model!r}; pick one from the list, or give your own as {spec_form}</source>
        <translation>未知模型 {model!r}；请从列表中选择，或以 {spec_form} 的形式给出你自己的模型</translation>
    </message>
    <message>
        <source>the TensorBoard export needs the tensorboard package: {hint}</source>
        <translation>导出为 TensorBoard 需要 tensorboard 包：{hint}</translation>
    </message>
    <message>
        <source>unknown export format {fmt}: use csv, json or tensorboard</source>
        <translation>未知的导出格式 {fmt}：请使用 csv、json 或 tensorboard</translation>
    </message>
    <message>
        <source>TensorBoard log dir</source>
        <translation>TensorBoard 日志目录</translation>
    </message>
    <message>
        <source>CSV export folder</source>
        <translation>CSV 导出文件夹</translation>
    </message>
    <message>
        <source>JSON export folder</source>
        <translation>JSON 导出文件夹</translation>
    </message>
    <message>
        <source>folder for the JSON export</source>
        <translation>JSON 导出所在的文件夹</translation>
    </message>
    <message>
        <source>{path} is a file, but the {what} must be a folder</source>
        <translation>{path} 是一个文件，但{what}必须是文件夹</translation>
    </message>
    <message>
        <source>cannot create the {what} {path} ({error})</source>
        <translation>无法创建{what} {path}（{error}）</translation>
    </message>
    <message>
        <source>could not write the export to {where} ({error})</source>
        <translation>无法将导出写入 {where}（{error}）</translation>
    </message>
    <message>
        <source>smoothing must be between 0 and 0.999 (the loss plot&apos;s range), not {smoothing:g}</source>
        <translation>平滑系数必须在 0 到 0.999 之间（即损失曲线的范围），而不是 {smoothing:g}</translation>
    </message>
    <message>
        <source>synchronises BatchNorm over the processes of a data-parallel run, and this run is one process; add --nproc N (2 or more) or leave --sync-bn out</source>
        <translation>--sync-bn 在数据并行运行的各进程之间同步 BatchNorm，而此运行只有一个进程；请加上 --nproc N（2 或以上），或去掉 --sync-bn</translation>
    </message>
    <message>
        <source>find-batch-size measures one process on one device; leave --nproc out (each process of a data-parallel run trains batch_size / nproc images, so it can take nproc times the batch size found)</source>
        <translation>find-batch-size 只测量一个设备上的一个进程；请去掉 --nproc（数据并行运行的每个进程训练 batch_size / nproc 张图像，因此可用找到的批大小的 nproc 倍）</translation>
    </message>
    <message>
        <source>find-batch-size measures one process on one device; leave --sync-bn out</source>
        <translation>find-batch-size 只测量一个设备上的一个进程；请去掉 --sync-bn</translation>
    </message>
    <message>
        <source>synchronises BatchNorm over the processes of a data-parallel run, and every configuration here is one process; give a --vs nproc=N (2 or more) or leave --sync-bn out</source>
        <translation>--sync-bn 在数据并行运行的各进程之间同步 BatchNorm，而这里每个配置都只有一个进程；请给出 --vs nproc=N（2 或以上），或去掉 --sync-bn</translation>
    </message>
    <message>
        <source>the run store {path} is a folder; give --runs-db a file name, such as {example}</source>
        <translation>运行记录库 {path} 是一个文件夹；请给 --runs-db 一个文件名，例如 {example}</translation>
    </message>
    <message>
        <source>a named pipe (FIFO)</source>
        <translation>命名管道（FIFO）</translation>
    </message>
    <message>
        <source>a socket</source>
        <translation>套接字</translation>
    </message>
    <message>
        <source>a device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>the run store {path} is {kind}, not a file; give --runs-db a file name</source>
        <translation>运行记录库 {path} 是{kind}，不是文件；请给 --runs-db 一个文件名</translation>
    </message>
    <message>
        <source>{detail} (to predict for a device this machine lacks, give --capacity)</source>
        <translation>{detail}（要为本机没有的设备做预测，请给出 --capacity）</translation>
    </message>
    <message>
        <source>the script exited with code {code}</source>
        <translation>脚本以退出码 {code} 结束</translation>
    </message>
    <message>
        <source>{model} at batch {batch} x {seq_len:,} tokens ({precision}, {optimizer}) on {device}</source>
        <translation>{model}，批量 {batch} x {seq_len:,} 词元（{precision}，{optimizer}），在 {device} 上</translation>
    </message>
    <message>
        <source>{model} at batch {batch} ({precision}, {optimizer}) on {device}</source>
        <translation>{model}，批量 {batch}（{precision}，{optimizer}），在 {device} 上</translation>
    </message>
    <message>
        <source>bf16 autocast</source>
        <translation>bf16 自动混合精度</translation>
    </message>
    <message>
        <source>fp16 autocast</source>
        <translation>fp16 自动混合精度</translation>
    </message>
    <message>
        <source>fp32 (autocast off)</source>
        <translation>fp32（autocast 关）</translation>
    </message>
    <message>
        <source>channels_last off</source>
        <translation>channels_last 关</translation>
    </message>
    <message>
        <source>channels_last</source>
        <translation>channels_last</translation>
    </message>
    <message>
        <source>SGD instead of AdamW</source>
        <translation>用 SGD 代替 AdamW</translation>
    </message>
    <message>
        <source>AdamW instead of SGD</source>
        <translation>用 AdamW 代替 SGD</translation>
    </message>
    <message>
        <source>half the sequence length ({seq_len})</source>
        <translation>序列长度减半（{seq_len}）</translation>
    </message>
    <message>
        <source>activation checkpointing off</source>
        <translation>激活检查点关</translation>
    </message>
    <message>
        <source>activation checkpointing per transformer block ({blocks} in all)</source>
        <translation>按 Transformer 块做激活检查点（共 {blocks} 个）</translation>
    </message>
    <message>
        <source>activation checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>half the batch ({batch})</source>
        <translation>批量减半（{batch}）</translation>
    </message>
    <message>
        <source>double the batch ({batch})</source>
        <translation>批量加倍（{batch}）</translation>
    </message>
    <message>
        <source>batch {fits} fits as configured; batch {requested} fits with {change} (predicted peak {peak})</source>
        <translation>按当前设置批量 {fits} 能放下；改为{change}后批量 {requested} 能放下（预测峰值 {peak}）</translation>
    </message>
    <message>
        <source>no batch fits as configured; batch {requested} fits with {change} (predicted peak {peak})</source>
        <translation>按当前设置没有批量能放下；改为{change}后批量 {requested} 能放下（预测峰值 {peak}）</translation>
    </message>
    <message>
        <source>batch {fits} fits as configured; no single change makes batch {requested} fit</source>
        <translation>按当前设置批量 {fits} 能放下；没有单一改动能让批量 {requested} 放下</translation>
    </message>
    <message>
        <source>not even batch 1 fits as configured, and no single change makes batch {requested} fit</source>
        <translation>按当前设置连批量 1 都放不下，也没有单一改动能让批量 {requested} 放下</translation>
    </message>
    <message>
        <source>{model} has no blocks to checkpoint (resnet stages, a features or encoder Sequential of blocks, or a Sequential of sub-modules); run it without activation checkpointing</source>
        <translation>{model} 没有可做检查点的块（resnet 阶段、由块组成的 features 或 encoder Sequential，或由子模块组成的 Sequential）；请不用激活检查点运行它</translation>
    </message>
    <message>
        <source>no optimizer steps in this script (weights updated by hand): each backward() is recorded as a step</source>
        <translation>该脚本没有优化器步骤（手动更新权重）：每次 backward() 记为一步</translation>
    </message>
    <message>
        <source>watching stopped: {kind}: {error}</source>
        <translation>观察已停止：{kind}：{error}</translation>
    </message>
    <message>
        <source>the script handles {signal} itself: the window&apos;s Pause and Resume do not reach it</source>
        <translation>脚本自己处理 {signal}：窗口的“暂停”和“继续”无法作用于它</translation>
    </message>
    <message>
        <source>the script handles {signal} itself: the window&apos;s Clear cache does not reach it</source>
        <translation>脚本自己处理 {signal}：窗口的“清除缓存”无法作用于它</translation>
    </message>
    <message>
        <source>the loss became nan or inf at step {step}</source>
        <translation>损失在第 {step} 步变为 nan 或 inf</translation>
    </message>
    <message>
        <source>ended by {signal}</source>
        <translation>因 {signal} 结束</translation>
    </message>
    <message>
        <source>the program exited with code {code}</source>
        <translation>程序以退出码 {code} 结束</translation>
    </message>
    <message>
        <source>the training ended by an exception the Trainer does not pass to callbacks</source>
        <translation>训练因一个 Trainer 不会传给回调的异常而结束</translation>
    </message>
    <message>
        <source>--agent-command names the agent on another machine: give --remote HOST too</source>
        <translation>--agent-command 指定的是另一台机器上的代理：请同时给出 --remote HOST</translation>
    </message>
    <message>
        <source>--remote-cwd names a folder on another machine: give --remote HOST too</source>
        <translation>--remote-cwd 指定的是另一台机器上的文件夹：请同时给出 --remote HOST</translation>
    </message>
    <message>
        <source>the agent on {host} sent a runs list that is not one</source>
        <translation>{host} 上的代理发来的运行列表并不是一个列表</translation>
    </message>
    <message>
        <source>the agent on {host} said more runs follow from {offset} but sent none; listing stopped</source>
        <translation>{host} 上的代理说从 {offset} 起还有更多运行，却一个也没有发来；已停止列出</translation>
    </message>
    <message>
        <source>the agent on {host} sent run {run_id} twice (its pages do not move on); listing stopped</source>
        <translation>{host} 上的代理两次发来运行 {run_id}（它的分页没有向前推进）；已停止列出</translation>
    </message>
    <message>
        <source>the agent on {host} sent more than {pages} pages of runs; listing stopped</source>
        <translation>{host} 上的代理发来的运行超过 {pages} 页；已停止列出</translation>
    </message>
    <message>
        <source>runs delete works on this machine&apos;s store only; delete remote runs on that machine</source>
        <translation>runs delete 只作用于本机的运行记录库；远程的运行请在那台机器上删除</translation>
    </message>
    <message>
        <source>--runs-db names a store on this machine: with --remote the agent reads the remote&apos;s store</source>
        <translation>--runs-db 指定的是本机的运行记录库：使用 --remote 时，代理读取的是远程机器的记录库</translation>
    </message>
    <message>
        <source>{host} ({store})</source>
        <translation>{host}（{store}）</translation>
    </message>
    <message>
        <source>the agent&apos;s runs lack {fields}</source>
        <translation>代理返回的运行缺少 {fields}</translation>
    </message>
    <message>
        <source>no run {run_id} on {host} (`{prog} runs list --remote {host}`)</source>
        <translation>{host} 上没有运行 {run_id}（`{prog} runs list --remote {host}`）</translation>
    </message>
    <message>
        <source>not with --remote: {why}</source>
        <translation>不能与 --remote 一起使用：{why}</translation>
    </message>
    <message>
        <source>with --remote, give --device too: a preset&apos;s settings depend on the remote device&apos;s kind</source>
        <translation>使用 --remote 时请同时给出 --device：预设的设置取决于远程设备的类型</translation>
    </message>
    <message>
        <source>give the command to run after --, e.g. watch --remote HOST -- python train.py</source>
        <translation>请在 -- 之后给出要运行的命令，例如 watch --remote HOST -- python train.py</translation>
    </message>
    <message>
        <source>with --remote, the command must be `python SCRIPT ARGS` (or python -m MODULE): the agent runs it with the remote&apos;s Python; got {command}</source>
        <translation>使用 --remote 时，命令必须是 `python SCRIPT ARGS`（或 python -m MODULE）：代理用远程机器的 Python 运行它；收到的是 {command}</translation>
    </message>
    <message>
        <source>{error}; the run goes on on {host} (uid {uid})</source>
        <translation>{error}；运行在 {host} 上继续（uid {uid}）</translation>
    </message>
    <message>
        <source>recorded as run {run_id} in {path}</source>
        <translation>已记录为 {path} 中的运行 {run_id}</translation>
    </message>
    <message>
        <source>say hello first (op hello, with your protocol)</source>
        <translation>请先问候（操作 hello，附上你的协议版本）</translation>
    </message>
    <message>
        <source>a request needs an integer id</source>
        <translation>请求需要一个整数 id</translation>
    </message>
    <message>
        <source>no such op: {op}</source>
        <translation>没有这个操作：{op}</translation>
    </message>
    <message>
        <source>stream {id} is running already</source>
        <translation>数据流 {id} 已在运行</translation>
    </message>
    <message>
        <source>no stream {id} is running</source>
        <translation>没有正在运行的数据流 {id}</translation>
    </message>
    <message>
        <source>argument {name} is missing</source>
        <translation>缺少参数 {name}</translation>
    </message>
    <message>
        <source>argument {name} has the wrong type</source>
        <translation>参数 {name} 的类型不对</translation>
    </message>
    <message>
        <source>hello was said already</source>
        <translation>已经问候过了</translation>
    </message>
    <message>
        <source>argument interval_s must be from 0.1 to 60 seconds</source>
        <translation>参数 interval_s 必须在 0.1 到 60 秒之间</translation>
    </message>
    <message>
        <source>argument offset must be 0 or more</source>
        <translation>参数 offset 必须大于等于 0</translation>
    </message>
    <message>
        <source>no run with uid {uid} on {host}</source>
        <translation>{host} 上没有 uid 为 {uid} 的运行</translation>
    </message>
    <message>
        <source>argument argv must be a list of 1 to {most} strings</source>
        <translation>参数 argv 必须是包含 1 到 {most} 个字符串的列表</translation>
    </message>
    <message>
        <source>run {run_id} was not started by the agent of this run store on {host}: only a run started through it (from a window or --remote) is steered from another machine; steer this one where it was started</source>
        <translation>运行 {run_id} 不是由 {host} 上此运行记录库的代理启动的：只有经由代理启动的运行（来自窗口或 --remote）才能从另一台机器操控；请在启动它的地方操控它</translation>
    </message>
    <message>
        <source>argument rows must be columns or objects</source>
        <translation>参数 rows 必须是 columns 或 objects</translation>
    </message>
    <message>
        <source>cwd: no folder {path} on {host}</source>
        <translation>cwd：{host} 上没有文件夹 {path}</translation>
    </message>
    <message>
        <source>no such control: {word}</source>
        <translation>没有这个控制：{word}</translation>
    </message>
    <message>
        <source>run {run_id} trains on {host}, not on {here}</source>
        <translation>运行 {run_id} 在 {host} 上训练，而不是在 {here} 上</translation>
    </message>
    <message>
        <source>run {run_id} is not running (it is {status})</source>
        <translation>运行 {run_id} 不在运行中（状态为 {status}）</translation>
    </message>
    <message>
        <source>argument overrides must be a list of objects</source>
        <translation>参数 overrides 必须是对象列表</translation>
    </message>
    <message>
        <source>must be a positive number of bytes, got {value}</source>
        <translation>必须是正的字节数，收到 {value}</translation>
    </message>
    <message>
        <source>a job with uid {uid} was started already</source>
        <translation>uid 为 {uid} 的任务已经启动过</translation>
    </message>
    <message>
        <source>cannot start the job: {why}</source>
        <translation>无法启动任务：{why}</translation>
    </message>
    <message>
        <source>argument after must be 0 or more</source>
        <translation>参数 after 必须大于或等于 0</translation>
    </message>
    <message>
        <source>argument encoding must be deflate or left out</source>
        <translation>参数 encoding 必须是 deflate 或省略</translation>
    </message>
    <message>
        <source>no job with uid {uid} on {host}</source>
        <translation>{host} 上没有 uid 为 {uid} 的任务</translation>
    </message>
    <message>
        <source>the job&apos;s process ended without a last word</source>
        <translation>任务进程结束时没有留下最后一行</translation>
    </message>
    <message>
        <source>the job {uid} on {host} has ended</source>
        <translation>{host} 上的任务 {uid} 已经结束</translation>
    </message>
    <message>
        <source>{host} has no signal for {control}</source>
        <translation>{host} 上没有用于 {control} 的信号</translation>
    </message>
    <message>
        <source>run {run_id} has just ended</source>
        <translation>运行 {run_id} 刚刚结束</translation>
    </message>
    <message>
        <source>run {run_id} belongs to another user</source>
        <translation>运行 {run_id} 属于另一个用户</translation>
    </message>
    <message>
        <source>-m needs a module name, e.g. -m mypackage.train; got {module}</source>
        <translation>-m 需要一个模块名，例如 -m mypackage.train；收到的是 {module}</translation>
    </message>
    <message>
        <source>no module {module} in {folder} on {host}: -m runs a module of your own there (a .py file or a package with __main__.py)</source>
        <translation>{host} 上的 {folder} 中没有模块 {module}：-m 运行的是你自己在那里的模块（一个 .py 文件或带 __main__.py 的包）</translation>
    </message>
    <message>
        <source>--allow: {path} is not a folder</source>
        <translation>--allow：{path} 不是文件夹</translation>
    </message>
    <message>
        <source>watch a script</source>
        <translation>监视脚本</translation>
    </message>
    <message>
        <source>the folder to start in</source>
        <translation>启动所在的文件夹</translation>
    </message>
    <message>
        <source>the module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>the script</source>
        <translation>脚本</translation>
    </message>
    <message>
        <source>the dataset folder</source>
        <translation>数据集文件夹</translation>
    </message>
    <message>
        <source>the model and the dataset come from two allowed folders on {host}: keep them in one</source>
        <translation>模型和数据集来自 {host} 上两个不同的允许文件夹：请放在同一个文件夹中</translation>
    </message>
    <message>
        <source>run your own {field} ({spec})</source>
        <translation>运行你自己的 {field}（{spec}）</translation>
    </message>
    <message>
        <source>{spec}: {module} is a module of Python&apos;s standard library, not your own code: the agent on {host} runs your own code only from files under the folders it allows</source>
        <translation>{spec}：{module} 是 Python 标准库的模块，不是你自己的代码：{host} 上的代理只运行其允许文件夹下文件中的你自己的代码</translation>
    </message>
    <message>
        <source>{spec}: the agent on {host} runs your own code only from a file under the folders it allows ({folders}), and this is none</source>
        <translation>{spec}：{host} 上的代理只运行其允许文件夹（{folders}）下文件中的你自己的代码，而这不是</translation>
    </message>
    <message>
        <source>the agent on {host} may not {what}: it runs only the built-in models and datasets unless it is started with {option} (e.g. gpu-train-monitor agent --allow ~/projects)</source>
        <translation>{host} 上的代理不能{what}：除非以 {option} 启动（例如 gpu-train-monitor agent --allow ~/projects），它只运行内置的模型和数据集</translation>
    </message>
    <message>
        <source>use {path}</source>
        <translation>使用 {path}</translation>
    </message>
    <message>
        <source>{what} {path} is outside the folders the agent on {host} allows ({folders}); links and &apos;..&apos; are followed before this check</source>
        <translation>{what} {path} 不在 {host} 上的代理允许的文件夹（{folders}）之内；检查前会先解析链接和 &apos;..&apos;</translation>
    </message>
    <message>
        <source>python {option} is not run on {host}: watch a script (train.py ARGS) or a module (-m pkg.train ARGS)</source>
        <translation>不会在 {host} 上运行 python {option}：请监视一个脚本（train.py ARGS）或一个模块（-m pkg.train ARGS）</translation>
    </message>
    <message>
        <source>no script {path} in {folder} on {host}</source>
        <translation>{host} 上的 {folder} 中没有脚本 {path}</translation>
    </message>
    <message>
        <source>a run with uid {uid} is recorded already on {host}</source>
        <translation>{host} 上已记录了 uid 为 {uid} 的运行</translation>
    </message>
    <message>
        <source>cannot read device {spec}: {why}</source>
        <translation>无法读取设备 {spec}：{why}</translation>
    </message>
    <message>
        <source>its process ended before it recorded anything</source>
        <translation>它的进程在记录任何内容之前就结束了</translation>
    </message>
    <message>
        <source>the chunk&apos;s columns are missing or not lists of names</source>
        <translation>数据块缺少列名，或列名不是名称列表</translation>
    </message>
    <message>
        <source>the chunk&apos;s run is not an object</source>
        <translation>数据块中的运行不是一个对象</translation>
    </message>
    <message>
        <source>the chunk&apos;s {table} are not lists</source>
        <translation>数据块中的 {table} 不是列表</translation>
    </message>
    <message>
        <source>a row of {table} does not match its columns</source>
        <translation>{table} 的一行与其列不匹配</translation>
    </message>
    <message>
        <source>the first row of {table} lacks values</source>
        <translation>{table} 的第一行缺少值</translation>
    </message>
    <message>
        <source>the chunk&apos;s steps are not first, epochs and loss</source>
        <translation>数据块中的步骤不是 first、epochs 和 loss</translation>
    </message>
    <message>
        <source>the chunk&apos;s steps&apos; epochs are not [epoch, count] pairs</source>
        <translation>数据块中步骤的 epochs 不是 [epoch, count] 对</translation>
    </message>
    <message>
        <source>the chunk&apos;s losses are not base64</source>
        <translation>数据块中的损失不是 base64</translation>
    </message>
    <message>
        <source>the chunk has {losses} losses for {steps} steps</source>
        <translation>数据块中 {steps} 个步骤有 {losses} 个损失</translation>
    </message>
    <message>
        <source>cannot log in to {host}: the server refused every key ssh offered ({detail}); check that `ssh {host}` logs in without a password prompt (a key in ssh-agent or ~/.ssh/config)</source>
        <translation>无法登录 {host}：服务器拒绝了 ssh 提供的所有密钥（{detail}）；请确认 `ssh {host}` 无需输入密码即可登录（ssh-agent 或 ~/.ssh/config 中的密钥）</translation>
    </message>
    <message>
        <source>unknown host {host}: ssh could not resolve its name; check the spelling, or add it to ~/.ssh/config</source>
        <translation>未知主机 {host}：ssh 无法解析它的名称；请检查拼写，或将它加入 ~/.ssh/config</translation>
    </message>
    <message>
        <source>the host key of {host} is not trusted yet (or has changed); connect once with `ssh {host}` and check the key it shows, then try again</source>
        <translation>{host} 的主机密钥尚未被信任（或已改变）；请先用 `ssh {host}` 连接一次并核对它显示的密钥，然后重试</translation>
    </message>
    <message>
        <source>cannot reach {host}: {detail}</source>
        <translation>无法连接到 {host}：{detail}</translation>
    </message>
    <message>
        <source>gpu-train-monitor is not installed on {host} (its shell could not run `{command}`); install it there (pip install . in a clone of the project), or name the command with --agent-command, e.g. --agent-command &apos;~/venv/bin/gpu-train-monitor agent&apos;</source>
        <translation>{host} 上没有安装 gpu-train-monitor（其 shell 无法运行 `{command}`）；请在那里安装（在项目的克隆中执行 pip install .），或用 --agent-command 指定命令，例如 --agent-command &apos;~/venv/bin/gpu-train-monitor agent&apos;</translation>
    </message>
    <message>
        <source>ssh could not connect to {host}: {detail}</source>
        <translation>ssh 无法连接到 {host}：{detail}</translation>
    </message>
    <message>
        <source>the agent on {host} ended before it said hello (exit code {code}): {detail}</source>
        <translation>{host} 上的代理在问候之前就结束了（退出码 {code}）：{detail}</translation>
    </message>
    <message>
        <source>the run was deleted on {host}</source>
        <translation>该运行已在 {host} 上被删除</translation>
    </message>
    <message>
        <source>the run on {host} ended before it recorded anything: {why}</source>
        <translation>{host} 上的运行在记录任何内容之前就结束了：{why}</translation>
    </message>
    <message>
        <source>{why}; reconnecting in {seconds:g} s</source>
        <translation>{why}；{seconds:g} 秒后重新连接</translation>
    </message>
    <message>
        <source>the connection to {host} dropped</source>
        <translation>与 {host} 的连接已断开</translation>
    </message>
    <message>
        <source>warning: the clocks of this machine and {host} differ by {seconds:.0f} s, so a run followed from there can look interrupted here; let both machines set their clocks by NTP</source>
        <translation>警告：本机与 {host} 的时钟相差 {seconds:.0f} 秒，从那里跟随的运行在这里可能显示为中断；请让两台机器都通过 NTP 校准时钟</translation>
    </message>
    <message>
        <source>the agent sent a chunk that cannot be read: {error}</source>
        <translation>代理发送了无法读取的数据块：{error}</translation>
    </message>
    <message>
        <source>no answer from {host} within {seconds:g} s (ssh ran `{command}`); check that `ssh {host}` works from this machine</source>
        <translation>{host} 在 {seconds:g} 秒内没有应答（ssh 运行了 `{command}`）；请确认在本机上 `ssh {host}` 可用</translation>
    </message>
    <message>
        <source>the request is too long to send: {error}</source>
        <translation>请求太长，无法发送：{error}</translation>
    </message>
    <message>
        <source>{host} did not answer `{op}` within {seconds:g} s; the connection looks dead</source>
        <translation>{host} 在 {seconds:g} 秒内没有应答 `{op}`；连接似乎已断开</translation>
    </message>
    <message>
        <source>the agent on {host} broke the protocol: {error}</source>
        <translation>{host} 上的代理违反了协议：{error}</translation>
    </message>
    <message>
        <source>the agent on {host} did not start with its hello</source>
        <translation>{host} 上的代理没有先发送问候</translation>
    </message>
    <message>
        <source>the connection to {host} was closed</source>
        <translation>与 {host} 的连接已关闭</translation>
    </message>
    <message>
        <source>the transport exited with code {code}</source>
        <translation>传输进程以退出码 {code} 结束</translation>
    </message>
    <message>
        <source>the connection to {host} was lost ({detail}); runs there go on</source>
        <translation>与 {host} 的连接丢失（{detail}）；那里的运行会继续</translation>
    </message>
    <message>
        <source>the agent sent a run that is not an object</source>
        <translation>代理发送的运行不是一个对象</translation>
    </message>
    <message>
        <source>the agent sent a run whose uid is not a text</source>
        <translation>代理发送的运行的 uid 不是文本</translation>
    </message>
    <message>
        <source>the agent sent rows of run {sent} while run {uid} is followed</source>
        <translation>正在跟随运行 {uid}，代理却发送了运行 {sent} 的记录</translation>
    </message>
    <message>
        <source>the agent sent rows without the run they belong to</source>
        <translation>代理发送的行缺少它们所属的运行</translation>
    </message>
    <message>
        <source>the agent sent run {uid} without its {columns}</source>
        <translation>代理发送的运行 {uid} 缺少 {columns}</translation>
    </message>
    <message>
        <source>run {uid} of {origin} was not copied: run {run_id} of this run store, recorded here, has that uid, and a copy never replaces it</source>
        <translation>{origin} 的运行 {uid} 未被复制：此运行记录库中在本机记录的运行 {run_id} 使用了该 uid，副本绝不会替换它</translation>
    </message>
    <message>
        <source>run {uid} of {origin} was not copied: run {run_id} of this run store, copied from {holder}, has that uid, and a copy never replaces it</source>
        <translation>{origin} 的运行 {uid} 未被复制：此运行记录库中从 {holder} 复制的运行 {run_id} 使用了该 uid，副本绝不会替换它</translation>
    </message>
    <message>
        <source>the agent sent {table} that are not a list of rows</source>
        <translation>代理发送的 {table} 不是行的列表</translation>
    </message>
    <message>
        <source>the agent sent {table} without their {columns}</source>
        <translation>代理发送的 {table} 缺少 {columns}</translation>
    </message>
    <message>
        <source>the agent sent {value} for {table}.{column}, which holds {kind}</source>
        <translation>代理为 {table}.{column} 发送了 {value}，而该列存放的是{kind}</translation>
    </message>
    <message>
        <source>whole numbers</source>
        <translation>整数</translation>
    </message>
    <message>
        <source>numbers</source>
        <translation>数字</translation>
    </message>
    <message>
        <source>text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>the agent sent rows the local run store cannot hold ({error})</source>
        <translation>代理发送的行无法存入本地运行记录库（{error}）</translation>
    </message>
    <message>
        <source>the agent sent rows of run {uid} before the run itself</source>
        <translation>代理在发送运行 {uid} 本身之前就发送了它的行</translation>
    </message>
    <message>
        <source>the line is not UTF-8 text</source>
        <translation>这一行不是 UTF-8 文本</translation>
    </message>
    <message>
        <source>the line is not JSON ({why})</source>
        <translation>这一行不是 JSON（{why}）</translation>
    </message>
    <message>
        <source>the line is JSON nested too deeply</source>
        <translation>这一行的 JSON 嵌套太深</translation>
    </message>
    <message>
        <source>the line is JSON but not an object</source>
        <translation>这一行是 JSON，但不是对象</translation>
    </message>
    <message>
        <source>the line has {size} bytes, more than the {limit} allowed; it was ignored</source>
        <translation>这一行有 {size} 字节，超过允许的 {limit}；已忽略</translation>
    </message>
    <message>
        <source>this gpu-train-monitor speaks protocol {here_protocol}, the one on {host} speaks {there_protocol}: install the same gpu-train-monitor version on both machines: here {here_app}, on {host} {there_app}</source>
        <translation>本机的 gpu-train-monitor 使用协议 {here_protocol}，{host} 上的使用协议 {there_protocol}：请在两台机器上安装相同版本的 gpu-train-monitor：本机为 {here_app}，{host} 上为 {there_app}</translation>
    </message>
    <message>
        <source>this connection has {limit} streams running, the most one connection may have; cancel one before starting another</source>
        <translation>此连接已有 {limit} 个数据流在运行，已达到一个连接的上限；请先取消一个，再启动新的</translation>
    </message>
    <message>
        <source>the line holds the number {number}, outside the 64-bit range of the run store</source>
        <translation>该行包含数字 {number}，超出了运行存储的 64 位整数范围</translation>
    </message>
    <message>
        <source>the gpu-train-monitor on {host} gives its protocol as {value}, not a number like this one&apos;s {here_protocol}: install the same gpu-train-monitor version on both machines: here {here_app}, on {host} {there_app}</source>
        <translation>{host} 上的 gpu-train-monitor 给出的协议是 {value}，而不是像本机的 {here_protocol} 这样的数字：请在两台机器上安装相同版本的 gpu-train-monitor：本机为 {here_app}，{host} 上为 {there_app}</translation>
    </message>
    <message>
        <source>this gpu-train-monitor and the one on {host} both speak protocol {here_protocol}, yet {host} refused to talk ({refusal}): install the same gpu-train-monitor version on both machines: here {here_app}, on {host} {there_app}</source>
        <translation>本机和 {host} 上的 gpu-train-monitor 都使用协议 {here_protocol}，但 {host} 拒绝了通信（{refusal}）：请在两台机器上安装相同版本的 gpu-train-monitor：本机为 {here_app}，{host} 上为 {there_app}</translation>
    </message>
    <message>
        <source>it did not say why</source>
        <translation>它没有说明原因</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>空值</translation>
    </message>
    <message>
        <source>{value} (text)</source>
        <translation>{value}（文本）</translation>
    </message>
    <message>
        <source>{value} (a yes/no value)</source>
        <translation>{value}（布尔值）</translation>
    </message>
    <message>
        <source>a receiver of the agent&apos;s lines failed: {error}</source>
        <translation>代理消息的一个接收者出错：{error}</translation>
    </message>
    <message>
        <source>uid: {uid} is not a run uid (letters, digits, &apos;_&apos;, &apos;-&apos; and &apos;.&apos;, at most 128, not starting with &apos;.&apos; or &apos;-&apos;)</source>
        <translation>uid：{uid} 不是运行 uid（字母、数字、&apos;_&apos;、&apos;-&apos; 和 &apos;.&apos;，最多 128 个，不能以 &apos;.&apos; 或 &apos;-&apos; 开头）</translation>
    </message>
    <message>
        <source>cannot start the run: a value or argument contains a NUL character</source>
        <translation>无法启动运行：某个值或参数包含 NUL 字符</translation>
    </message>
    <message>
        <source>a run with uid {uid} was started already</source>
        <translation>uid 为 {uid} 的运行已经启动过</translation>
    </message>
    <message>
        <source>cannot start the run: {why}</source>
        <translation>无法启动运行：{why}</translation>
    </message>
    <message>
        <source>no run with uid {uid} in {path}</source>
        <translation>{path} 中没有 uid 为 {uid} 的运行</translation>
    </message>
    <message>
        <source>run {run_id} was deleted</source>
        <translation>运行 {run_id} 已被删除</translation>
    </message>
    <message>
        <source>{env} cannot be read as a command line: {error}</source>
        <translation>{env} 无法作为命令行读取：{error}</translation>
    </message>
    <message>
        <source>--agent-command {text!r} cannot be read: {error}</source>
        <translation>--agent-command {text!r} 无法读取：{error}</translation>
    </message>
    <message>
        <source>--agent-command is empty: give the agent&apos;s command, e.g. &apos;gpu-train-monitor agent&apos;</source>
        <translation>--agent-command 为空：请给出代理的命令，例如 &apos;gpu-train-monitor agent&apos;</translation>
    </message>
    <message>
        <source>{host!r} is not a machine to connect to: give an ssh config alias, user@host or user@host:port</source>
        <translation>{host!r} 不是可以连接的机器：请给出 ssh 配置中的别名、user@host 或 user@host:port</translation>
    </message>
    <message>
        <source>{host!r}: the port must be a number from 1 to 65535</source>
        <translation>{host!r}：端口必须是 1 到 65535 之间的数字</translation>
    </message>
    <message>
        <source>cannot run {program} to reach {host}: {error}; install OpenSSH&apos;s client (ssh)</source>
        <translation>无法运行 {program} 来连接 {host}：{error}；请安装 OpenSSH 客户端（ssh）</translation>
    </message>
    <message>
        <source>the model or its optimizer was not given to the watch</source>
        <translation>模型或其优化器没有交给监视</translation>
    </message>
    <message>
        <source>the model&apos;s forward was not seen before its first optimizer step</source>
        <translation>在第一次优化器步骤之前没有看到模型的前向计算</translation>
    </message>
    <message>
        <source>its forward returned no tensor that a gradient flows to</source>
        <translation>它的前向计算没有返回任何有梯度流经的张量</translation>
    </message>
    <message>
        <source>{model} at batch {batch} ({precision}, {optimizer}) on {device}, with the loss the model returns, or else the sum of its outputs, in place of the training&apos;s own loss</source>
        <translation>{model}，批大小 {batch}（{precision}，{optimizer}），在 {device} 上；用模型返回的损失（否则用其输出之和）代替训练自己的损失</translation>
    </message>
    <message>
        <source>no such job: {kind}</source>
        <translation>没有这种任务：{kind}</translation>
    </message>
    <message>
        <source>the job is gone on {host}: {why}</source>
        <translation>{host} 上的任务已不存在：{why}</translation>
    </message>
    <message>
        <source>the job on {host} ended without finishing: {why}</source>
        <translation>{host} 上的任务未完成就结束了：{why}</translation>
    </message>
    <message>
        <source>the agent sent journal lines that cannot be read: {why}</source>
        <translation>代理发来的任务日志行无法读取：{why}</translation>
    </message>
    <message>
        <source>stopped following the comparison on {host}; it goes on there</source>
        <translation>已停止跟踪 {host} 上的对比；对比在那里继续进行</translation>
    </message>
    <message>
        <source>the search on {host} was not followed to its end</source>
        <translation>未能跟踪 {host} 上的搜索直到结束</translation>
    </message>
    <message>
        <source>the job ended without a result</source>
        <translation>任务结束时没有结果</translation>
    </message>
    <message>
        <source>it failed there: {why}</source>
        <translation>在那里失败了：{why}</translation>
    </message>
    <message>
        <source>a message whose template and values do not match</source>
        <translation>一条模板与取值不匹配的消息</translation>
    </message>
    <message>
        <source>a number written as {value}</source>
        <translation>一个写作 {value} 的数字</translation>
    </message>
    <message>
        <source>a mapping that is not a list of pairs</source>
        <translation>一个不是键值对列表的映射</translation>
    </message>
    <message>
        <source>packed numbers that are not float32</source>
        <translation>不是 float32 的打包数字</translation>
    </message>
    <message>
        <source>a value of type {name}, unknown here</source>
        <translation>一个类型为 {name} 的值，此处未知</translation>
    </message>
    <message>
        <source>a {name} that cannot be built here: {why}</source>
        <translation>一个无法在此处构建的 {name}：{why}</translation>
    </message>
    <message>
        <source>a mapping key that is not a single value</source>
        <translation>一个不是单个值的映射键</translation>
    </message>
    <message>
        <source>the other side sent {what}</source>
        <translation>对方发来了{what}</translation>
    </message>
    <message>
        <source>{what}={value} cannot be recorded (a whole number from 0 to 2**53 can): recorded as unknown</source>
        <translation>{what}={value} 无法记录（只能记录 0 到 2**53 之间的整数）：记为未知</translation>
    </message>
    <message>
        <source>pin_memory has no effect on the CPU; it is ignored</source>
        <translation>pin_memory 在 CPU 上不起作用，已忽略</translation>
    </message>
    <message>
        <source>non_blocking is ignored on MPS: asynchronous copies from pageable memory can corrupt batches there; batches are copied synchronously</source>
        <translation>在 MPS 上忽略 non_blocking：从可分页内存异步复制可能损坏批次；批次改为同步复制</translation>
    </message>
    <message>
        <source>non_blocking needs pin_memory (an asynchronous copy is only safe from pinned memory); batches are copied synchronously</source>
        <translation>non_blocking 需要 pin_memory（只有从锁页内存异步复制才安全）；批次改为同步复制</translation>
    </message>
    <message>
        <source>{workers} loader workers on {cores} CPU cores: they compete with training for the cores; {cores} or fewer is usually faster</source>
        <translation>{cores} 个 CPU 核心上有 {workers} 个加载进程：它们与训练争用核心；通常 {cores} 个或更少更快</translation>
    </message>
    <message>
        <source>the training waits for its data {percent:.0f}% of each step: try resident placement, loader workers, pin_memory</source>
        <translation>训练每步有 {percent:.0f}% 的时间在等待数据：可尝试常驻放置、数据加载进程（loader workers）或 pin_memory</translation>
    </message>
    <message>
        <source>the GPU ran out of work before the host launched more at {percent:.0f}% of step starts (it idles between kernels): try torch.compile, CUDA graphs, a larger batch</source>
        <translation>在 {percent:.0f}% 的步开始时，GPU 已做完所有工作、等待主机发起更多（它在内核之间空闲）：试试 torch.compile、CUDA graphs、更大的批量</translation>
    </message>
    <message>
        <source>forward, backward and the update take {percent:.0f}% of each step: a faster device, mixed precision or a smaller model is what speeds it up</source>
        <translation>前向、反向和参数更新占每步 {percent:.0f}% 的时间：更快的设备、混合精度或更小的模型才能提速</translation>
    </message>
    <message>
        <source>{value} names no file: give the path of a text file after the colon</source>
        <translation>{value} 没有指定文件：请在冒号后写文本文件的路径</translation>
    </message>
    <message>
        <source>{model} is a language model but {dataset} is an image dataset; use synthetic-text or text:PATH (a text file)</source>
        <translation>{model} 是语言模型，但 {dataset} 是图像数据集；请使用 synthetic-text 或 text:PATH（一个文本文件）</translation>
    </message>
    <message>
        <source>{model} is an image model but {dataset} is text; use gpt-tiny or gpt-small (or your own model taking token ids)</source>
        <translation>{model} 是图像模型，但 {dataset} 是文本；请使用 gpt-tiny 或 gpt-small（或你自己的接受词元 ID 的模型）</translation>
    </message>
    <message>
        <source>sizes the GPT models only (gpt-tiny, gpt-small), not {model}</source>
        <translation>只用于设定 GPT 模型（gpt-tiny、gpt-small）的大小，不适用于 {model}</translation>
    </message>
    <message>
        <source>{width} does not split evenly over {heads} attention heads; use a multiple of {heads}</source>
        <translation>{width} 不能平均分给 {heads} 个注意力头；请使用 {heads} 的倍数</translation>
    </message>
    <message>
        <source>{samples:,} sequences of {seq_len} tokens make {tokens:,} tokens; a synthetic text may have at most {limit:,}: use fewer samples or shorter sequences</source>
        <translation>{samples:,} 个 {seq_len} 词元的序列共 {tokens:,} 个词元；合成文本最多 {limit:,} 个：请减少样本数或缩短序列</translation>
    </message>
    <message>
        <source>{seq_len} tokens is longer than the text: {path} has {size:,} bytes and a sequence needs seq_len + 1 of them (its targets are the next tokens); use at most {limit}</source>
        <translation>{seq_len} 个词元比文本还长：{path} 只有 {size:,} 字节，而一个序列需要 seq_len + 1 个字节（其目标是下一个词元）；最多使用 {limit}</translation>
    </message>
    <message>
        <source>no text file {path}</source>
        <translation>没有文本文件 {path}</translation>
    </message>
    <message>
        <source>{path} is a folder, not a text file</source>
        <translation>{path} 是文件夹，不是文本文件</translation>
    </message>
    <message>
        <source>{path} ({size}) is not a text file: {reason}; give a text file (it is read as bytes)</source>
        <translation>{path}（{size}）不是文本文件：{reason}；请给出一个文本文件（按字节读取）</translation>
    </message>
    <message>
        <source>{path} is empty: there is no text to train on</source>
        <translation>{path} 是空的：没有可训练的文本</translation>
    </message>
    <message>
        <source>it holds NUL bytes (the first at byte {offset:,})</source>
        <translation>其中有 NUL 字节（第一个在第 {offset:,} 字节）</translation>
    </message>
    <message>
        <source>{share:.0%} of its bytes are control characters</source>
        <translation>其中 {share:.0%} 的字节是控制字符</translation>
    </message>
    <message>
        <source>memory snapshot {path}: {why}</source>
        <translation>内存快照 {path}：{why}</translation>
    </message>
    <message>
        <source>memory snapshot {path}: not a regular file</source>
        <translation>内存快照 {path}：不是普通文件</translation>
    </message>
    <message>
        <source>memory snapshot {path}: refused: the file asks to load Python code ({what}), which a snapshot never holds; nothing was run</source>
        <translation>内存快照 {path}：已拒绝：该文件要求加载 Python 代码（{what}），而快照从不包含代码；没有运行任何东西</translation>
    </message>
    <message>
        <source>not a pickle, or a truncated one</source>
        <translation>不是 pickle 文件，或是被截断的 pickle</translation>
    </message>
    <message>
        <source>not a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot writes one: it has segments)</source>
        <translation>不是 PyTorch 内存快照（torch.cuda.memory._dump_snapshot 写出的快照含有 segments）</translation>
    </message>
    <message>
        <source>its device_traces is not a list of event lists</source>
        <translation>其 device_traces 不是事件列表的列表</translation>
    </message>
    <message>
        <source>memory snapshot {path}: no device {device} in it (devices: {known})</source>
        <translation>内存快照 {path}：其中没有设备 {device}（设备：{known}）</translation>
    </message>
    <message>
        <source>memory snapshot {path}: not a PyTorch memory snapshot ({why})</source>
        <translation>内存快照 {path}：不是 PyTorch 内存快照（{why}）</translation>
    </message>
    <message>
        <source>an event lacks {key}</source>
        <translation>某个事件缺少 {key}</translation>
    </message>
    <message>
        <source>an event has a value of the wrong type</source>
        <translation>某个事件的值类型不对</translation>
    </message>
    <message>
        <source>picks from this machine&apos;s devices; with --remote, give the runs as --vs</source>
        <translation>从本机的设备中选择；使用 --remote 时，请用 --vs 给出各次运行</translation>
    </message>
    <message>
        <source>{name!r} {needs}: {reason}</source>
        <translation>{name!r}{needs}：{reason}</translation>
    </message>
    <message>
        <source>no ready-made comparison {name!r} here; this machine offers: {offered}</source>
        <translation>这里没有现成对比 {name!r}；本机提供：{offered}</translation>
    </message>
    <message>
        <source>peak reserved {off_reserved} off vs {on_reserved} on, cache gap (peak reserved minus peak allocated) {off_gap} vs {on_gap}</source>
        <translation>已保留峰值 关闭 {off_reserved} 对比 开启 {on_reserved}，缓存差（已保留峰值减去已分配峰值）{off_gap} 对比 {on_gap}</translation>
    </message>
    <message>
        <source>{how}: {figures}; {speed}</source>
        <translation>{how}：{figures}；{speed}</translation>
    </message>
    <message>
        <source>expandable segments did not take effect as asked: the allocator&apos;s segments of {label} were {kind}, so the runs do not differ in them</source>
        <translation>可扩展段未按要求生效：{label} 的分配器段是{kind}段，因此两次运行在这一点上并无差别</translation>
    </message>
    <message>
        <source>expandable</source>
        <translation>可扩展</translation>
    </message>
    <message>
        <source>fixed</source>
        <translation>固定</translation>
    </message>
    <message>
        <source>expandable segments (not confirmed: the allocator&apos;s segments were not read back from each run)</source>
        <translation>可扩展段（未确认：没有从每次运行读回分配器的段）</translation>
    </message>
    <message>
        <source>expandable segments (read back from the allocator&apos;s segments of each run)</source>
        <translation>可扩展段（已从每次运行的分配器段读回）</translation>
    </message>
    <message>
        <source>this PyTorch build cannot change the CUDA allocator&apos;s expandable segments inside a running process (torch._C._accelerator_setAllocatorSettings is missing); set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:{value} before starting instead</source>
        <translation>此 PyTorch 版本无法在运行中的进程内更改 CUDA 分配器的可扩展段（缺少 torch._C._accelerator_setAllocatorSettings）；请改为在启动前设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:{value}</translation>
    </message>
    <message>
        <source>expandable segments change nothing on {device}: only CUDA&apos;s caching allocator has segments to expand</source>
        <translation>可扩展段在 {device} 上不起作用：只有 CUDA 缓存分配器有可扩展的段</translation>
    </message>
    <message>
        <source>expandable segments on for this run: the CUDA allocator grows its segments in place</source>
        <translation>本次运行开启可扩展段：CUDA 分配器原地扩展其段</translation>
    </message>
    <message>
        <source>expandable segments off for this run (the environment&apos;s allocator settings turn them on): the CUDA allocator caches fixed segments</source>
        <translation>本次运行关闭可扩展段（环境中的分配器设置开启了它们）：CUDA 分配器缓存固定段</translation>
    </message>
    <message>
        <source>sequence lengths apply to text datasets only (synthetic-text, text:PATH), not {dataset}</source>
        <translation>序列长度只适用于文本数据集（synthetic-text、text:PATH），不适用于 {dataset}</translation>
    </message>
    <message>
        <source>give at least one size</source>
        <translation>请至少给出一个大小</translation>
    </message>
    <message>
        <source>{fused}: {fused_peak} at sequence length {seq_len}, {fused_growth:.2f}x at {doubled_len} (attention&apos;s activations {fused_attention:.2f}x); {plain}: {plain_peak}, {plain_growth:.2f}x (attention&apos;s activations {plain_attention:.2f}x; its T x T matrices, beyond the fused, {matrices:.2f}x)</source>
        <translation>{fused}：序列长度 {seq_len} 时 {fused_peak}，{doubled_len} 时 {fused_growth:.2f}x（注意力激活 {fused_attention:.2f}x）；{plain}：{plain_peak}，{plain_growth:.2f}x（注意力激活 {plain_attention:.2f}x；其比融合注意力多出的 T x T 矩阵 {matrices:.2f}x）</translation>
    </message>
    <message>
        <source>{fused}: {fused_peak} at sequence length {seq_len}, {fused_growth:.2f}x at {doubled_len} (attention&apos;s activations {fused_attention:.2f}x); {plain}: {plain_peak}, {plain_growth:.2f}x (attention&apos;s activations {plain_attention:.2f}x, no more than the fused)</source>
        <translation>{fused}：序列长度 {seq_len} 时 {fused_peak}，{doubled_len} 时 {fused_growth:.2f}x（注意力激活 {fused_attention:.2f}x）；{plain}：{plain_peak}，{plain_growth:.2f}x（注意力激活 {plain_attention:.2f}x，不比融合注意力多）</translation>
    </message>
    <message>
        <source>peaks measured, growth predicted from a trace on fake tensors</source>
        <translation>峰值为实测，增长由伪张量追踪预测</translation>
    </message>
    <message>
        <source>peaks and growth predicted from a trace on fake tensors</source>
        <translation>峰值与增长均由伪张量追踪预测</translation>
    </message>
    <message>
        <source>{text}; {how}</source>
        <translation>{text}；{how}</translation>
    </message>
    <message>
        <source>{attention}; {why}</source>
        <translation>{attention}；{why}</translation>
    </message>
</context>
<context>
    <name>BreakdownView</name>
    <message>
        <source>Rank</source>
        <translation>进程</translation>
    </message>
    <message>
        <source>Every rank of a data-parallel run is sampled at the same step: the rank shown</source>
        <translation>数据并行运行的每个进程都在同一步采样：这里选择显示哪个进程</translation>
    </message>
    <message>
        <source>Phase peaks: –</source>
        <translation>各阶段峰值：–</translation>
    </message>
    <message>
        <source>Highest allocated memory in each phase of the sampled step (on the CPU and MPS: memory at the end of each phase)</source>
        <translation>采样步中每个阶段已分配显存的最高值（在 CPU 和 MPS 上：每个阶段结束时的内存）</translation>
    </message>
    <message>
        <source>rank {rank}</source>
        <translation>进程 {rank}</translation>
    </message>
    <message>
        <source>{size} ({share}%)</source>
        <translation>{size}（{share}%）</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>Phase peaks at step {step}: {peaks}</source>
        <translation>第 {step} 步各阶段峰值：{peaks}</translation>
    </message>
    <message>
        <source>Measured at step {step}, as a whole: a script&apos;s own loop shows no phases</source>
        <translation>在第 {step} 步整体测量：脚本自己的循环不显示各阶段</translation>
    </message>
    <message>
        <source>Activations + workspace = the step&apos;s allocator peak minus everything else.</source>
        <translation>激活值 + 工作区 = 本步的分配器峰值减去其余各项。</translation>
    </message>
    <message>
        <source>No allocator peak counters on this device: activations are the bytes autograd saved for backward; phase values are the process&apos;s memory at each phase&apos;s end.</source>
        <translation>此设备没有分配器峰值计数：激活值是自动求导为反向传播保存的字节数；各阶段的值是进程在该阶段结束时的内存。</translation>
    </message>
    <message>
        <source>Memory breakdown</source>
        <comment>on the CPU: the process&apos;s memory</comment>
        <translation>内存构成</translation>
    </message>
    <message>
        <source>Memory breakdown</source>
        <translation>显存构成</translation>
    </message>
    <message>
        <source>Memory of one training step, by what holds it (sampled once per report)</source>
        <comment>on the CPU: the process&apos;s memory</comment>
        <translation>一个训练步的内存构成（每次报告采样一次）</translation>
    </message>
    <message>
        <source>Memory of one training step on {rank}, by what holds it (sampled once per report)</source>
        <comment>on the CPU: the process&apos;s memory</comment>
        <translation>{rank} 上一个训练步的内存构成（每次报告采样一次）</translation>
    </message>
    <message>
        <source>Memory of one training step, by what holds it (sampled once per report)</source>
        <translation>一个训练步的显存构成（每次报告采样一次）</translation>
    </message>
    <message>
        <source>Memory of one training step on {rank}, by what holds it (sampled once per report)</source>
        <translation>{rank} 上一个训练步的显存构成（每次报告采样一次）</translation>
    </message>
</context>
<context>
    <name>CheckpointResume</name>
    <message>
        <source>Resume from checkpoint…</source>
        <translation>从检查点恢复…</translation>
    </message>
    <message>
        <source>Continue a run from a checkpoint it saved: the same run, its steps and curve go on</source>
        <translation>从运行保存的检查点继续：仍是同一个运行，步数和曲线接着往下走</translation>
    </message>
    <message>
        <source>Resume from checkpoint</source>
        <translation>从检查点恢复</translation>
    </message>
    <message>
        <source>Checkpoints (*.pt);;All files (*)</source>
        <translation>检查点 (*.pt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>{path} is a file of the run store, not a checkpoint</source>
        <translation>{path} 是运行记录库的文件，不是检查点</translation>
    </message>
    <message>
        <source>{file}: {model} on {dataset}, saved at step {step} (after epoch {epoch}).</source>
        <translation>{file}：在 {dataset} 上训练的 {model}，保存于第 {step} 步（第 {epoch} 轮结束后）。</translation>
    </message>
    <message>
        <source>{file}: {model} on {dataset}, saved at step {step} (during epoch {epoch}).</source>
        <translation>{file}：在 {dataset} 上训练的 {model}，保存于第 {step} 步（第 {epoch} 轮进行中）。</translation>
    </message>
    <message>
        <source>Resuming imports and runs your code named in it: {code}.</source>
        <translation>恢复时会导入并运行其中指定的你的代码：{code}。</translation>
    </message>
    <message>
        <source>Train up to epoch:</source>
        <translation>训练到第几轮：</translation>
    </message>
    <message>
        <source>cannot resume: {reason}</source>
        <translation>无法恢复：{reason}</translation>
    </message>
    <message>
        <source>the run&apos;s earlier steps are not shown: {error}</source>
        <translation>未显示该运行之前的步：{error}</translation>
    </message>
    <message>
        <source>the loss plot shows run {run}&apos;s {steps} recorded steps before the checkpoint, then the resumed ones</source>
        <translation>损失曲线先显示运行 {run} 在检查点之前记录的 {steps} 步，再显示恢复后的步</translation>
    </message>
</context>
<context>
    <name>CompareMenu</name>
    <message>
        <source>Each run trains {steps} steps, one run after another</source>
        <translation>每个运行训练 {steps} 步，依次进行</translation>
    </message>
    <message>
        <source>Fix the settings first: a comparison starts from them</source>
        <translation>请先修正设置：对比以当前设置为基础</translation>
    </message>
    <message>
        <source>{description}; {steps} steps each</source>
        <translation>{description}；每个运行 {steps} 步</translation>
    </message>
    <message>
        <source>{name} ({needs})</source>
        <translation>{name}（{needs}）</translation>
    </message>
    <message>
        <source>Custom comparison…</source>
        <translation>自定义对比…</translation>
    </message>
    <message>
        <source>Type {least} to {most} runs as setting=value lines</source>
        <translation>以 设置=值 行的形式输入 {least} 到 {most} 个运行</translation>
    </message>
    <message>
        <source>the comparison could not start: {reason}</source>
        <translation>无法开始对比：{reason}</translation>
    </message>
    <message>
        <source>custom comparison</source>
        <translation>自定义对比</translation>
    </message>
</context>
<context>
    <name>CompareMode</name>
    <message>
        <source>; </source>
        <comment>between the runs of a comparison</comment>
        <translation>；</translation>
    </message>
    <message>
        <source>{number}. {label}</source>
        <translation>{number}. {label}</translation>
    </message>
    <message>
        <source>comparing {count} configurations ({name}), {steps} steps each, one after another: {runs}</source>
        <translation>正在对比 {count} 种配置（{name}），每个 {steps} 步，依次运行：{runs}</translation>
    </message>
    <message>
        <source>comparison completed: {headline}</source>
        <translation>对比已完成：{headline}</translation>
    </message>
    <message>
        <source>comparison stopped: {headline}</source>
        <translation>对比已停止：{headline}</translation>
    </message>
    <message>
        <source>comparison failed: {headline}</source>
        <translation>对比失败：{headline}</translation>
    </message>
    <message>
        <source>comparison ended ({status}): {headline}</source>
        <translation>对比已结束（{status}）：{headline}</translation>
    </message>
    <message>
        <source>run {number} of {count}: {label}</source>
        <translation>第 {number}/{count} 个运行：{label}</translation>
    </message>
</context>
<context>
    <name>CompareView</name>
    <message>
        <source>No comparison yet: choose one from the Compare menu under the settings.</source>
        <translation>尚无对比：请在设置下方的“对比”菜单中选择一项。</translation>
    </message>
    <message>
        <source>Loss against time</source>
        <translation>损失随时间变化</translation>
    </message>
    <message>
        <source>time since the run&apos;s start</source>
        <translation>自运行开始的时间</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Loss against step</source>
        <translation>损失随步数变化</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>Where each run&apos;s step time goes: the medians of its reports after the first (warm-up), on the host&apos;s clock</source>
        <translation>每次运行的步时间花在哪里：首次报告（预热）之后各报告的中位数，按主机时钟计</translation>
    </message>
    <message>
        <source>run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>whole step</source>
        <translation>整步</translation>
    </message>
    <message>
        <source>bound by</source>
        <translation>瓶颈</translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation>{ms} 毫秒</translation>
    </message>
    <message>
        <source>images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>Each run&apos;s median images/s over its reports after the first (warm-up), with the 10th to 90th percentile as the error bar</source>
        <translation>每个运行在首次报告（预热）之后各次报告的图像/秒中位数，误差线为第 10 至第 90 百分位</translation>
    </message>
    <message>
        <source>no images/s yet:
bars come after
each run&apos;s warm-up</source>
        <translation>还没有 images/s：
每个运行预热之后
才显示柱状图</translation>
    </message>
    <message>
        <source>Images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>Each bar: the run&apos;s median images/s after warm-up; its whisker: p10 to p90</source>
        <translation>每根柱：该次运行预热后的图像/秒中位数；误差线：p10 到 p90</translation>
    </message>
    <message>
        <source>{number}. {label}</source>
        <translation>{number}. {label}</translation>
    </message>
    <message>
        <source>&lt;b&gt;{title}&lt;/b&gt;: {count} runs of {model}, &lt;b&gt;{steps} steps each&lt;/b&gt;, one after another on the same machine (images/s leaves out each run&apos;s first report: warm-up)</source>
        <translation>&lt;b&gt;{title}&lt;/b&gt;：{model} 的 {count} 个运行，&lt;b&gt;每个 {steps} 步&lt;/b&gt;，在同一台机器上依次运行（图像/秒不计每个运行的首次报告：预热）</translation>
    </message>
    <message>
        <source>&lt;b&gt;{title}&lt;/b&gt;: {count} runs, &lt;b&gt;{steps} steps each&lt;/b&gt;, one after another on the same machine (images/s leaves out each run&apos;s first report: warm-up)</source>
        <translation>&lt;b&gt;{title}&lt;/b&gt;：{count} 个运行，&lt;b&gt;每个 {steps} 步&lt;/b&gt;，在同一台机器上依次运行（图像/秒不计每个运行的首次报告：预热）</translation>
    </message>
    <message>
        <source>racing: the headline comes when every run has finished</source>
        <translation>对比进行中：所有运行结束后给出结论</translation>
    </message>
    <message>
        <source>⚠ {agreement}</source>
        <translation>⚠ {agreement}</translation>
    </message>
    <message>
        <source>see the log</source>
        <translation>请查看日志</translation>
    </message>
    <message>
        <source>the comparison ended without a result: see the log</source>
        <translation>对比未得出结果即已结束：请查看日志</translation>
    </message>
</context>
<context>
    <name>ConnectDialog</name>
    <message>
        <source>Connect to a machine</source>
        <translation>连接到一台机器</translation>
    </message>
    <message>
        <source>Watch and drive the GPUs of another machine over SSH, with your own keys and ~/.ssh/config. Nothing listens on a port: the window runs the agent there through ssh. That machine needs gpu-train-monitor installed (the same version as here).</source>
        <translation>通过 SSH 监视并操作另一台机器的 GPU，使用你自己的密钥和 ~/.ssh/config。不监听任何端口：窗口通过 ssh 在那里运行代理。那台机器需要安装 gpu-train-monitor（与本机相同的版本）。</translation>
    </message>
    <message>
        <source>gpu-box, or user@host:port</source>
        <translation>gpu-box，或 user@host:port</translation>
    </message>
    <message>
        <source>A host name from ~/.ssh/config, or user@host, or user@host:port; recent ones are listed</source>
        <translation>~/.ssh/config 中的主机名，或 user@host，或 user@host:port；会列出最近使用的</translation>
    </message>
    <message>
        <source>The command that starts the agent on that machine, e.g. ~/venv/bin/gpu-train-monitor agent</source>
        <translation>在那台机器上启动代理的命令，例如 ~/venv/bin/gpu-train-monitor agent</translation>
    </message>
    <message>
        <source>Host:</source>
        <translation>主机：</translation>
    </message>
    <message>
        <source>Agent command:</source>
        <translation>代理命令：</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Type the machine to connect to.</source>
        <translation>请输入要连接的机器。</translation>
    </message>
    <message>
        <source>connecting to {host}…</source>
        <translation>正在连接 {host}…</translation>
    </message>
    <message>
        <source>Could not connect: {problem}</source>
        <translation>无法连接：{problem}</translation>
    </message>
    <message>
        <source>The agent command cannot be read: a quote or a backslash in it has no pair. Type it as you would in a shell, e.g. ~/venv/bin/gpu-train-monitor agent</source>
        <translation>无法读取代理命令：其中的引号或反斜杠没有配对。请像在 shell 中那样输入，例如 ~/venv/bin/gpu-train-monitor agent</translation>
    </message>
</context>
<context>
    <name>ConnectionLabel</name>
    <message>
        <source>{host} · {ms} ms</source>
        <translation>{host} · {ms} 毫秒</translation>
    </message>
    <message>
        <source>{host} · connected</source>
        <translation>{host} · 已连接</translation>
    </message>
    <message>
        <source>{host} · connecting…</source>
        <translation>{host} · 正在连接…</translation>
    </message>
    <message>
        <source>{host} · reconnecting…</source>
        <translation>{host} · 正在重新连接…</translation>
    </message>
    <message>
        <source>{host} · not connected</source>
        <translation>{host} · 未连接</translation>
    </message>
    <message>
        <source>{host} · disconnected</source>
        <translation>{host} · 已断开</translation>
    </message>
    <message>
        <source>Connected over SSH to {host} ({name}); the round trip of the last ping</source>
        <translation>已通过 SSH 连接到 {host}（{name}）；数字为最近一次 ping 的往返时间</translation>
    </message>
    <message>
        <source>Connecting over SSH to {host}</source>
        <translation>正在通过 SSH 连接到 {host}</translation>
    </message>
    <message>
        <source>The connection to {host} dropped ({problem}); trying again</source>
        <translation>与 {host} 的连接已断开（{problem}）；正在重试</translation>
    </message>
    <message>
        <source>Could not connect to {host}: {problem}</source>
        <translation>无法连接到 {host}：{problem}</translation>
    </message>
    <message>
        <source>Not connected to {host}</source>
        <translation>未连接到 {host}</translation>
    </message>
</context>
<context>
    <name>CustomCompareDialog</name>
    <message>
        <source>Custom comparison</source>
        <translation>自定义对比</translation>
    </message>
    <message>
        <source>Run comparison</source>
        <translation>运行对比</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>One run per line, {least} to {most} lines: &lt;code&gt;setting=value&lt;/code&gt; pairs separated by commas, applied on the form&apos;s settings (e.g. &lt;code&gt;amp=bf16,channels_last=true&lt;/code&gt;). The runs train one after another, &lt;b&gt;{steps} steps each&lt;/b&gt; (the form&apos;s Max steps, or {steps} when it has none).</source>
        <translation>每行一个运行，共 {least} 到 {most} 行：以逗号分隔的 &lt;code&gt;设置=值&lt;/code&gt; 键值对，应用在表单的设置之上（例如 &lt;code&gt;amp=bf16,channels_last=true&lt;/code&gt;）。各运行依次训练，&lt;b&gt;每个 {steps} 步&lt;/b&gt;（即表单的最大步数，未设置时为 {steps}）。</translation>
    </message>
    <message>
        <source>One run per line, {least} to {most} lines: &lt;code&gt;setting=value&lt;/code&gt; pairs separated by commas, applied on the form&apos;s settings (e.g. &lt;code&gt;amp=bf16,channels_last=true&lt;/code&gt;). The runs train one after another, &lt;b&gt;{steps} steps each&lt;/b&gt; (the form&apos;s Max steps).</source>
        <translation>每行一个运行，共 {least} 到 {most} 行：以逗号分隔的 &lt;code&gt;设置=值&lt;/code&gt; 键值对，应用在表单的设置之上（例如 &lt;code&gt;amp=bf16,channels_last=true&lt;/code&gt;）。各运行依次训练，&lt;b&gt;每个 {steps} 步&lt;/b&gt;（即表单的最大步数）。</translation>
    </message>
</context>
<context>
    <name>DeviceWatch</name>
    <message>
        <source>device: loading PyTorch…</source>
        <translation>设备：正在加载 PyTorch…</translation>
    </message>
    <message>
        <source>device: {problem}</source>
        <translation>设备：{problem}</translation>
    </message>
    <message>
        <source>device: {device}</source>
        <translation>设备：{device}</translation>
    </message>
    <message>
        <source>device: {spec} ({name}) on {host}</source>
        <translation>设备：{host} 上的 {spec}（{name}）</translation>
    </message>
    <message>
        <source>device: PyTorch could not be loaded</source>
        <translation>设备：无法加载 PyTorch</translation>
    </message>
</context>
<context>
    <name>EventDisplay</name>
    <message>
        <source>config: {config}</source>
        <translation>配置：{config}</translation>
    </message>
</context>
<context>
    <name>ExportJob</name>
    <message>
        <source>run {run_id} as {format}</source>
        <translation>运行 {run_id}（{format}）</translation>
    </message>
</context>
<context>
    <name>FileDialogs</name>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>{suffix} file</source>
        <translation>{suffix} 文件</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
</context>
<context>
    <name>FinderPanel</name>
    <message>
        <source>device&apos;s</source>
        <translation>设备总容量</translation>
    </message>
    <message>
        <source>Memory to plan for. Leave at &quot;device&apos;s&quot; to use the selected device&apos;s; set it to plan for a GPU you do not have (e.g. 24 GB). On the CPU the default is the memory available now.</source>
        <translation>按多少显存来规划。保持“设备总容量”即使用所选设备的容量；也可以设定一个值，为手头没有的 GPU 做规划（例如 24 GB）。在 CPU 上，默认值是当前可用的内存。</translation>
    </message>
    <message>
        <source>Fraction of the capacity kept free for fragmentation and other processes</source>
        <translation>为碎片和其他进程预留的容量比例</translation>
    </message>
    <message>
        <source>First batch size tried; the search doubles from here</source>
        <translation>首个尝试的批大小；搜索从这里开始逐次翻倍</translation>
    </message>
    <message>
        <source>Find batch size</source>
        <translation>探测批大小</translation>
    </message>
    <message>
        <source>Predict the largest batch that fits without using memory, then confirm it with at most 3 real training trials with the settings on the left (where a step cannot be predicted: a few real steps per candidate, doubling, then binary search)</source>
        <translation>先在不占用内存的情况下预测能放下的最大批量，再用左侧的设置以最多 3 次真实训练试验确认（无法预测某一步时：每个候选跑几个真实步骤，先加倍，再二分查找）</translation>
    </message>
    <message>
        <source>Stop search</source>
        <translation>停止探测</translation>
    </message>
    <message>
        <source>Use this batch size</source>
        <translation>使用这个批大小</translation>
    </message>
    <message>
        <source>Capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>Margin</source>
        <translation>余量</translation>
    </message>
    <message>
        <source>Start at</source>
        <translation>起始值</translation>
    </message>
    <message>
        <source>Finds the largest batch whose training peak stays under capacity × (1 − margin).</source>
        <translation>找出训练峰值不超过 容量 × (1 − 余量) 的最大批大小。</translation>
    </message>
    <message>
        <source>batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>peak memory</source>
        <translation>峰值显存</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>too big</source>
        <translation>太大</translation>
    </message>
    <message>
        <source>fit</source>
        <translation>拟合</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>limit</source>
        <translation>上限</translation>
    </message>
    <message>
        <source>Fix the settings first: {error}</source>
        <translation>请先修正设置：{error}</translation>
    </message>
    <message>
        <source>{device} on {host}</source>
        <translation>{host} 上的 {device}</translation>
    </message>
    <message>
        <source>Searching with {model} on {device}…</source>
        <translation>正在 {device} 上用 {model} 探测…</translation>
    </message>
    <message>
        <source>batch-size search started: {model} on {device}</source>
        <translation>批大小探测已开始：{device} 上的 {model}</translation>
    </message>
    <message>
        <source>batch {batch}: out of memory, too big</source>
        <translation>批大小 {batch}：显存不足，太大</translation>
    </message>
    <message>
        <source>batch {batch}: peak {peak}, fits</source>
        <translation>批大小 {batch}：峰值 {peak}，放得下</translation>
    </message>
    <message>
        <source>batch {batch}: peak {peak}, too big</source>
        <translation>批大小 {batch}：峰值 {peak}，太大</translation>
    </message>
    <message>
        <source>{trial} (predicted {predicted})</source>
        <translation>{trial}（预测 {predicted}）</translation>
    </message>
    <message>
        <source>Largest batch that fits: {batch} (predicted peak {peak} of {limit} allowed; {fixed} fixed + {per_sample} per sample)</source>
        <translation>能放下的最大批大小：{batch}（预测峰值 {peak}，上限 {limit}；固定 {fixed} + 每个样本 {per_sample}）</translation>
    </message>
    <message>
        <source>Use batch size {batch}</source>
        <translation>使用批大小 {batch}</translation>
    </message>
    <message>
        <source>batch-size search: {batch} fits (1 trial)</source>
        <translation>批大小探测：{batch} 放得下（试了 1 次）</translation>
    </message>
    <message>
        <source>batch-size search: {batch} fits ({trials} trials)</source>
        <translation>批大小探测：{batch} 放得下（试了 {trials} 次）</translation>
    </message>
    <message>
        <source>The prediction said batch {predicted}; one real trial confirmed {batch}.</source>
        <translation>预测给出批量 {predicted}；一次真实试验确认了 {batch}。</translation>
    </message>
    <message>
        <source>The prediction said batch {predicted}; {trials} real trials confirmed {batch}.</source>
        <translation>预测给出批量 {predicted}；{trials} 次真实试验确认了 {batch}。</translation>
    </message>
    <message>
        <source>{result} {prediction}</source>
        <translation>{result} {prediction}</translation>
    </message>
    <message>
        <source>batch-size search: {error}</source>
        <translation>批大小探测：{error}</translation>
    </message>
    <message>
        <source>limit {size}</source>
        <translation>上限 {size}</translation>
    </message>
</context>
<context>
    <name>FitGridView</name>
    <message>
        <source>Batch × sequence length: predicting each cell…</source>
        <translation>批量 × 序列长度：正在逐格预测…</translation>
    </message>
    <message>
        <source>Batch × sequence length: no prediction ({reason})</source>
        <translation>批量 × 序列长度：没有预测（{reason}）</translation>
    </message>
    <message>
        <source>Will it fit, batch × sequence length: the predicted peak of each against {capacity}</source>
        <translation>放得下吗？批量 × 序列长度：每一格的预测峰值，对照 {capacity}</translation>
    </message>
    <message>
        <source>One training step predicted per cell without using memory. Fits: under the capacity less the {margin}% margin the batch-size finder keeps free; tight: inside the margin.</source>
        <translation>每一格预测一个训练步，不占用内存。放得下：低于容量减去批量大小查找器保留的 {margin}% 余量；很紧：落在余量之内。</translation>
    </message>
    <message>
        <source>{tokens} tokens</source>
        <translation>{tokens} 个词元</translation>
    </message>
    <message>
        <source>batch {batch}</source>
        <translation>批量 {batch}</translation>
    </message>
    <message>
        <source>{peak}, {verdict}</source>
        <translation>{peak}，{verdict}</translation>
    </message>
    <message>
        <source>batch {batch} × {tokens} tokens: predicted peak {peak}</source>
        <translation>批量 {batch} × {tokens} 个词元：预测峰值 {peak}</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>能放下</translation>
    </message>
    <message>
        <source>tight</source>
        <translation>很紧</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>放不下</translation>
    </message>
</context>
<context>
    <name>HistoryPanel</name>
    <message>
        <source>Search runs: name, note, model, dataset, device, status or #id</source>
        <translation>搜索运行：名称、备注、模型、数据集、设备、状态或 #编号</translation>
    </message>
    <message>
        <source>Open run…</source>
        <translation>打开运行…</translation>
    </message>
    <message>
        <source>Open the selected runs, each in a window of its own (a live run is followed as it trains); with none selected, show the list of runs</source>
        <translation>在各自的窗口中打开选中的运行（训练中的运行会随训练实时更新）；未选中任何运行时，显示运行列表</translation>
    </message>
    <message>
        <source>Clear overlays</source>
        <translation>清除叠加</translation>
    </message>
    <message>
        <source>Take every overlaid run off the live plots</source>
        <translation>从实时图表上移除所有叠加的运行</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Resume…</source>
        <translation>恢复…</translation>
    </message>
    <message>
        <source>No runs recorded yet in {path}: runs started here or with `gpu-train-monitor run` appear as they start.</source>
        <translation>{path} 中还没有记录任何运行：在这里或用 `gpu-train-monitor run` 开始的运行，一开始就会出现在这里。</translation>
    </message>
    <message>
        <source>{shown} of {total} runs</source>
        <translation>显示 {shown} 个，共 {total} 个运行</translation>
    </message>
    <message>
        <source>1 run</source>
        <translation>1 个运行</translation>
    </message>
    <message>
        <source>{total} runs</source>
        <translation>{total} 个运行</translation>
    </message>
    <message>
        <source>{live} live</source>
        <translation>{live} 个训练中</translation>
    </message>
    <message>
        <source>{overlaid} overlaid on the plots</source>
        <translation>{overlaid} 个叠加在图表上</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>{counts} — {path}</source>
        <translation>{counts} — {path}</translation>
    </message>
    <message>
        <source>{counts} — {path} (read-only)</source>
        <translation>{counts} — {path}（只读）</translation>
    </message>
    <message>
        <source>Remove overlay</source>
        <translation>移除叠加</translation>
    </message>
    <message>
        <source>Overlay on the live plots</source>
        <translation>叠加到实时图表上</translation>
    </message>
    <message>
        <source>run {run_id} could not be overlaid: {why}</source>
        <translation>无法叠加运行 {run_id}：{why}</translation>
    </message>
</context>
<context>
    <name>LanguageMenu</name>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>System language ({language})</source>
        <translation>系统语言（{language}）</translation>
    </message>
    <message>
        <source>Switch the window to this language now: lines already in the log stay as they were written, new lines come in this language</source>
        <translation>立即将窗口切换到此语言：日志中已有的行保持原样，新的行使用此语言</translation>
    </message>
    <message>
        <source>The window stays in English: {problem}</source>
        <translation>窗口保持英文：{problem}</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
</context>
<context>
    <name>LogPanel</name>
    <message>
        <source>Run start, epoch results, cache clears, warnings and errors appear here.</source>
        <translation>运行开始、每轮结果、缓存清空、警告和错误会显示在这里。</translation>
    </message>
    <message>
        <source>warning: {text}</source>
        <translation>警告：{text}</translation>
    </message>
    <message>
        <source>ERROR: {text}</source>
        <translation>错误：{text}</translation>
    </message>
</context>
<context>
    <name>LossPlot</name>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>loss per step</source>
        <translation>每步损失</translation>
    </message>
    <message>
        <source>smoothed (EMA)</source>
        <translation>平滑（EMA）</translation>
    </message>
    <message>
        <source>Validation accuracy</source>
        <translation>验证准确率</translation>
    </message>
    <message>
        <source>epoch</source>
        <translation>轮</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>EMA weight of the past: 0 shows raw losses, 0.99 smooths heavily</source>
        <translation>EMA 中历史值的权重：0 显示原始损失，0.99 平滑程度很高</translation>
    </message>
    <message>
        <source>log scale</source>
        <translation>对数坐标</translation>
    </message>
    <message>
        <source>Show the loss on a logarithmic axis</source>
        <translation>在对数坐标轴上显示损失</translation>
    </message>
    <message>
        <source>Smoothing</source>
        <translation>平滑</translation>
    </message>
    <message>
        <source>epoch {epoch}</source>
        <translation>第 {epoch} 轮</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>A comparison races runs of one process each: set the process count to 1</source>
        <translation>对比中的每个运行只用一个进程：请把进程数设为 1</translation>
    </message>
    <message>
        <source>GPU Training Monitor</source>
        <translation>GPU 训练监视器</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行记录</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>步时间</translation>
    </message>
    <message>
        <source>What if…</source>
        <translation>假设分析…</translation>
    </message>
    <message>
        <source>GPU (NVML)</source>
        <translation>GPU (NVML)</translation>
    </message>
    <message>
        <source>Batch-size finder</source>
        <translation>批大小探测</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>Comparison</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>a run or a batch-size search is under way</source>
        <translation>已有运行或批大小探测正在进行</translation>
    </message>
    <message>
        <source>cache clear requested: applied at the next step boundary on every process</source>
        <translation>已请求清空缓存：将在下一步结束时在每个进程上执行</translation>
    </message>
    <message>
        <source>cache clear requested: applied at the next step boundary</source>
        <translation>已请求清空缓存：将在下一步结束时执行</translation>
    </message>
    <message>
        <source>stopping the run before closing…</source>
        <translation>正在停止运行，随后关闭…</translation>
    </message>
    <message>
        <source>waiting for the batch-size trial to finish before closing</source>
        <translation>正在等待批大小试验结束后再关闭</translation>
    </message>
    <message>
        <source>waiting for the current step to finish before closing</source>
        <translation>正在等待当前这一步结束后再关闭</translation>
    </message>
</context>
<context>
    <name>MemoryInsight</name>
    <message>
        <source>Record memory history</source>
        <translation>记录显存历史</translation>
    </message>
    <message>
        <source>Save snapshot…</source>
        <translation>保存快照…</translation>
    </message>
    <message>
        <source>Record every allocation (bounded history) so a snapshot can be saved for pytorch.org/memory_viz</source>
        <translation>记录每一次分配（历史有上限），以便保存快照，在 pytorch.org/memory_viz 中查看</translation>
    </message>
    <message>
        <source>Memory history is recorded by the CUDA caching allocator: pick a CUDA device</source>
        <translation>显存历史由 CUDA 缓存分配器记录：请选择 CUDA 设备</translation>
    </message>
    <message>
        <source>Save the memory history of this run as a snapshot (opens in pytorch.org/memory_viz)</source>
        <translation>把本次运行的显存历史保存为快照（可在 pytorch.org/memory_viz 中打开）</translation>
    </message>
    <message>
        <source>Start a run with &quot;Record memory history&quot; ticked (CUDA only) to save a snapshot</source>
        <translation>勾选“记录显存历史”后再开始运行（仅限 CUDA），才能保存快照</translation>
    </message>
    <message>
        <source>Predicting what would fit…</source>
        <translation>正在预测能放下什么…</translation>
    </message>
    <message>
        <source>Predicted: {advice}.</source>
        <translation>预测：{advice}。</translation>
    </message>
    <message>
        <source>No prediction of what would fit: {reason}</source>
        <translation>无法预测能放下什么：{reason}</translation>
    </message>
    <message>
        <source>retrying with batch size {batch}</source>
        <translation>以批大小 {batch} 重试</translation>
    </message>
    <message>
        <source>batch size set to {batch} from the finder</source>
        <translation>已按批大小探测的结果把批大小设为 {batch}</translation>
    </message>
    <message>
        <source>Save memory snapshot</source>
        <translation>保存显存快照</translation>
    </message>
    <message>
        <source>PyTorch memory snapshot (*.pickle)</source>
        <translation>PyTorch 显存快照 (*.pickle)</translation>
    </message>
    <message>
        <source>memory snapshot requested: saved at the next step boundary to {path}</source>
        <translation>已请求显存快照：将在下一步结束时保存到 {path}</translation>
    </message>
    <message>
        <source>The selected device is {kind}: NVML reports on NVIDIA GPUs only.</source>
        <translation>所选设备是 {kind}：NVML 只报告 NVIDIA GPU 的情况。</translation>
    </message>
    <message>
        <source>NVML is not available (no NVIDIA driver or library found): device-wide readings cannot be shown. PyTorch&apos;s own counters still work.</source>
        <translation>NVML 不可用（未找到 NVIDIA 驱动或库）：无法显示整个设备的读数。PyTorch 自己的计数仍然可用。</translation>
    </message>
</context>
<context>
    <name>MemoryPlot</name>
    <message>
        <source>Device memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>占用</translation>
    </message>
    <message>
        <source>Device memory, capacity {capacity}</source>
        <translation>显存，总容量 {capacity}</translation>
    </message>
    <message>
        <source>Process memory (CPU), capacity {capacity}</source>
        <translation>进程内存（CPU），总容量 {capacity}</translation>
    </message>
    <message>
        <source>Process memory (CPU), capacity {capacity} ({limit})</source>
        <translation>进程内存（CPU），容量 {capacity}（{limit}）</translation>
    </message>
</context>
<context>
    <name>MenuBar</name>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Watch a script…</source>
        <translation>观察脚本…</translation>
    </message>
    <message>
        <source>Run a training script of yours unchanged and follow it live, as a run of the window&apos;s own</source>
        <translation>原样运行你自己的训练脚本，并像本窗口自己的运行一样实时跟踪它</translation>
    </message>
    <message>
        <source>Open memory snapshot…</source>
        <translation>打开内存快照…</translation>
    </message>
    <message>
        <source>Show a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) from any machine: its timeline and the largest allocations at its peak</source>
        <translation>显示来自任意机器的 CUDA 内存快照（torch.cuda.memory._dump_snapshot）：其时间线及峰值时最大的分配</translation>
    </message>
    <message>
        <source>Save plots…</source>
        <translation>保存图表…</translation>
    </message>
    <message>
        <source>Save the plots shown as PNG or SVG images, one file per plot</source>
        <translation>将当前显示的图表保存为 PNG 或 SVG 图像，每张图一个文件</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>Close the window (a run under way is stopped first)</source>
        <translation>关闭窗口（会先停止正在进行的运行）</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Compare</source>
        <translation>对比(&amp;C)</translation>
    </message>
    <message>
        <source>Checkpoint now</source>
        <translation>立即保存检查点</translation>
    </message>
    <message>
        <source>Save the model, optimizer and progress at the next step boundary</source>
        <translation>在下一步结束时保存模型、优化器和训练进度</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About GPU Training Monitor</source>
        <translation>关于 GPU 训练监视器(&amp;A)</translation>
    </message>
    <message>
        <source>The versions of the app, PyTorch, CUDA, the driver and Qt</source>
        <translation>本应用、PyTorch、CUDA、驱动和 Qt 的版本</translation>
    </message>
    <message>
        <source>&amp;Copy system info</source>
        <translation>复制系统信息(&amp;C)</translation>
    </message>
    <message>
        <source>Put the versions on the clipboard, for a bug report</source>
        <translation>将各版本信息复制到剪贴板，用于错误报告</translation>
    </message>
    <message>
        <source>Save the model, optimizer and progress at the next step boundary, to resume the run from later</source>
        <translation>在下一步结束时保存模型、优化器和训练进度，以便稍后从这里恢复运行</translation>
    </message>
    <message>
        <source>Only while a single run trains (a comparison&apos;s runs save no checkpoints)</source>
        <translation>仅在单个运行训练时可用（对比中的运行不保存检查点）</translation>
    </message>
    <message>
        <source>Open memory snapshot</source>
        <translation>打开内存快照</translation>
    </message>
    <message>
        <source>Memory snapshots (*.pickle *.pkl *.pt);;All files (*)</source>
        <translation>内存快照 (*.pickle *.pkl *.pt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Save plots (one file per plot: NAME-loss, NAME-memory…)</source>
        <translation>保存图表（每张图一个文件：名称-loss、名称-memory…）</translation>
    </message>
    <message>
        <source>Replace files?</source>
        <translation>替换文件？</translation>
    </message>
    <message>
        <source>{name} already exists in {folder}. Replace it?</source>
        <translation>{folder} 中已存在 {name}。要替换它吗？</translation>
    </message>
    <message>
        <source>{names} already exist in {folder}. Replace them?</source>
        <translation>{folder} 中已存在 {names}。要替换它们吗？</translation>
    </message>
    <message>
        <source>no plot is shown to save: open the plots&apos; splitter</source>
        <translation>没有显示任何可保存的图表：请拖开图表区的分隔条</translation>
    </message>
    <message>
        <source>could not save the plots to {path}: {reason}</source>
        <translation>无法将图表保存到 {path}：{reason}</translation>
    </message>
    <message>
        <source>saved 1 plot in {folder}: {names}</source>
        <translation>已在 {folder} 中保存 1 张图表：{names}</translation>
    </message>
    <message>
        <source>saved {count} plots in {folder}: {names}</source>
        <translation>已在 {folder} 中保存 {count} 张图表：{names}</translation>
    </message>
    <message>
        <source>checkpoint requested: saved at the next step boundary</source>
        <translation>已请求保存检查点：将在下一步结束时保存</translation>
    </message>
    <message>
        <source>System info copied to the clipboard: paste it into a bug report</source>
        <translation>系统信息已复制到剪贴板：可粘贴到错误报告中</translation>
    </message>
</context>
<context>
    <name>ModuleChart</name>
    <message>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Share of the step</source>
        <translation>占该步的比例</translation>
    </message>
    <message>
        <source>By module, predicted: the largest blocks of the model (open one for its layers)</source>
        <translation>按模块（预测）：模型中占用最多的块（展开可见其各层）</translation>
    </message>
    <message>
        <source>By module at step {step}: the largest blocks of the model (open one for its layers)</source>
        <translation>按模块（第 {step} 步）：模型中占用最多的块（展开可见其各层）</translation>
    </message>
    <message>
        <source>Each module&apos;s parameters, gradients and optimizer state, the activations it saved for backward and what else it made that is alive at the step&apos;s peak. The batch, the loss and what ran in no module are one row; the rows add up to {total}.</source>
        <translation>每个模块的参数、梯度和优化器状态，它为反向传播保存的激活值，以及它产生的、在该步峰值时仍存活的其他张量。批次、损失以及不在任何模块中运行的部分合为一行；各行合计 {total}。</translation>
    </message>
    <message>
        <source>{count} other modules</source>
        <translation>其他 {count} 个模块</translation>
    </message>
    <message>
        <source>(batch, loss, outside modules)</source>
        <translation>（批次、损失、模块之外）</translation>
    </message>
    <message>
        <source>Attention: {size} ({share}% of the step&apos;s peak), {activations} of it activations</source>
        <translation>注意力：{size}（占该步峰值的 {share}%），其中激活 {activations}</translation>
    </message>
    <message>
        <source>The attention modules of every block summed, their layers included: weights, gradients, optimizer state, and the activations they keep for backward, which grow with the sequence length (the plain softmax of QK^T keeps each head&apos;s sequence x sequence matrix)</source>
        <translation>每个块的注意力模块之和（含其中各层）：权重、梯度、优化器状态，以及为反向传播保留的激活，后者随序列长度增长（朴素的 QK^T softmax 为每个头保留序列 x 序列的矩阵）</translation>
    </message>
    <message>
        <source>activations {activations} · parameters {params} · gradients {grads} · optimizer {optimizer} · temporaries {temporaries}</source>
        <translation>激活值 {activations} · 参数 {params} · 梯度 {grads} · 优化器 {optimizer} · 临时张量 {temporaries}</translation>
    </message>
</context>
<context>
    <name>NvmlPanel</name>
    <message>
        <source>Select a CUDA device to see device-wide readings.</source>
        <translation>选择一个 CUDA 设备以查看整个设备的读数。</translation>
    </message>
    <message>
        <source>nvidia-smi counts every byte on the GPU; PyTorch counts only what its caching allocator reserved. The difference is the CUDA context (kernels, cuBLAS/cuDNN handles) and other processes.</source>
        <translation>nvidia-smi 统计 GPU 上的每一个字节；PyTorch 只统计其缓存分配器已保留的部分。两者之差是 CUDA 上下文（内核、cuBLAS/cuDNN 句柄）和其他进程。</translation>
    </message>
    <message>
        <source>Reserved minus allocated is memory PyTorch&apos;s caching allocator holds in free blocks for reuse. When no cached block fits a request, the allocator frees its cache and calls cudaMalloc again (a retry): many retries mean fragmented memory (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True can help).</source>
        <translation>已保留减去已分配，是 PyTorch 缓存分配器以空闲块形式留着复用的内存。当没有缓存块能满足请求时，分配器会释放缓存并再次调用 cudaMalloc（一次重试）：重试多说明内存碎片化（PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 可能有帮助）。</translation>
    </message>
    <message>
        <source>pid</source>
        <translation>进程 ID</translation>
    </message>
    <message>
        <source>process</source>
        <translation>进程</translation>
    </message>
    <message>
        <source>GPU memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Fragmentation: the cache, allocation retries and cudaMalloc failures are counted by CUDA&apos;s caching allocator; {kind} has none.</source>
        <translation>碎片化：缓存、分配重试和 cudaMalloc 失败由 CUDA 的缓存分配器统计；{kind} 没有这种分配器。</translation>
    </message>
    <message>
        <source>Allocator cache: {cached} reserved but not allocated. Since the process started: {retries} allocation retries (cache freed to fit a request), {ooms} cudaMalloc failures.</source>
        <translation>分配器缓存：{cached} 已保留但未分配。自进程启动以来：{retries} 次分配重试（为满足请求而释放缓存），{ooms} 次 cudaMalloc 失败。</translation>
    </message>
    <message>
        <source>Device used {used} of {total}</source>
        <translation>设备已用 {used}，共 {total}</translation>
    </message>
    <message>
        <source>utilization {percent}%</source>
        <translation>利用率 {percent}%</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the readings of the NVML summary</comment>
        <translation>，</translation>
    </message>
    <message>
        <source>PyTorch reserved {reserved}; the device shows {more} more.</source>
        <translation>PyTorch 已保留 {reserved}；设备显示的用量比这多 {more}。</translation>
    </message>
    <message>
        <source>This process: {used}, of which {context} is the CUDA context and libraries (not in PyTorch&apos;s counters).</source>
        <translation>本进程：{used}，其中 {context} 是 CUDA 上下文和库（不计入 PyTorch 的计数）。</translation>
    </message>
    <message>
        <source>Other processes: {used}.</source>
        <translation>其他进程：{used}。</translation>
    </message>
    <message>
        <source>{name} (this app)</source>
        <translation>{name}（本应用）</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>OomBanner</name>
    <message>
        <source>Find a batch size that fits</source>
        <translation>探测能放下的批大小</translation>
    </message>
    <message>
        <source>Stop here</source>
        <translation>就此停止</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>&lt;b&gt;{headline}.&lt;/b&gt; {message}</source>
        <translation>&lt;b&gt;{headline}。&lt;/b&gt;{message}</translation>
    </message>
    <message>
        <source>Retry with batch {size}</source>
        <translation>以批大小 {size} 重试</translation>
    </message>
    <message>
        <source>Largest holders by module ({source}), share of {total}:</source>
        <translation>按模块占用最多的（{source}），占 {total} 的比例：</translation>
    </message>
</context>
<context>
    <name>OptionalSpinBox</name>
    <message>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
</context>
<context>
    <name>Overlays</name>
    <message>
        <source>{title}: loss smoothed as the live EMA line</source>
        <translation>{title}：损失，按实时 EMA 曲线的方式平滑</translation>
    </message>
    <message>
        <source>{title} allocated (peak dotted)</source>
        <translation>{title} 已分配（点线为峰值）</translation>
    </message>
    <message>
        <source>{title} RSS (peak dotted)</source>
        <translation>{title} RSS（点线为峰值）</translation>
    </message>
</context>
<context>
    <name>PeakPrediction</name>
    <message>
        <source>fits ({spare} to spare)</source>
        <translation>能放下（余 {spare}）</translation>
    </message>
    <message>
        <source>tight (only {spare} to spare, under {share}%)</source>
        <translation>很紧（只余 {spare}，不到 {share}%）</translation>
    </message>
    <message>
        <source>does not fit ({over} over)</source>
        <translation>放不下（超出 {over}）</translation>
    </message>
    <message>
        <source>predicted peak {peak} per process, {total} for {processes}, of {capacity}</source>
        <translation>预测峰值每进程 {peak}，{processes} 共 {total}，容量 {capacity}</translation>
    </message>
    <message>
        <source>predicted peak {peak} per GPU of {capacity}</source>
        <translation>预测峰值每块 GPU {peak}，容量 {capacity}</translation>
    </message>
    <message>
        <source>predicted peak {peak}</source>
        <translation>预测峰值 {peak}</translation>
    </message>
    <message>
        <source>predicted peak {peak} of {capacity}</source>
        <translation>预测峰值 {peak}，容量 {capacity}</translation>
    </message>
    <message>
        <source>{head}: {verdict}</source>
        <translation>{head}：{verdict}</translation>
    </message>
    <message>
        <source>One training step at its peak: {what}, traced on tensors without memory in {seconds} s (no memory used). Parameters {params}, gradients {grads}, optimizer state {optimizer}, batch {batch}, activations and temporaries {activations}.</source>
        <translation>一个训练步骤的峰值：{what}，在无内存张量上追踪，用时 {seconds} 秒（未占用内存）。参数 {params}，梯度 {grads}，优化器状态 {optimizer}，批次 {batch}，激活值与临时张量 {activations}。</translation>
    </message>
    <message>
        <source>Counted too: the process&apos;s own memory (Python, PyTorch&apos;s libraries), {own}. Against the memory available now (what other programs and this app leave), as the batch-size finder plans. Not counted: the dataset.</source>
        <translation>也计入：进程自身的内存（Python、PyTorch 的库），{own}。对照的是当前可用的内存（其他程序和本应用剩下的），与批大小探测的规划相同。未计入：数据集。</translation>
    </message>
    <message>
        <source>Not counted: the CUDA context and the allocator&apos;s cache, a few hundred MB more on a GPU.</source>
        <translation>未计入：CUDA 上下文和分配器的缓存，在 GPU 上还要多几百 MB。</translation>
    </message>
    <message>
        <source>Tight: less than {share}% of the capacity would be left.</source>
        <translation>很紧：容量剩下不到 {share}%。</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>The memory one training step of these settings needs at its peak, predicted</source>
        <translation>按这些设置，一个训练步骤在峰值时所需的内存（预测）</translation>
    </message>
    <message>
        <source>predicted peak: waiting for PyTorch to load…</source>
        <translation>预测峰值：正在等待 PyTorch 加载…</translation>
    </message>
    <message>
        <source>predicted peak: worked out after the run</source>
        <translation>预测峰值：运行结束后计算</translation>
    </message>
    <message>
        <source>predicted peak: working it out…</source>
        <translation>预测峰值：正在计算…</translation>
    </message>
    <message>
        <source>no prediction: {reason}</source>
        <translation>无预测：{reason}</translation>
    </message>
</context>
<context>
    <name>PredictedBreakdown</name>
    <message>
        <source>Predicting this step&apos;s memory to compare with the measured one…</source>
        <translation>正在预测这一步的内存，以便与测量值比较…</translation>
    </message>
    <message>
        <source>No prediction of this step to compare with: {reason}</source>
        <translation>没有这一步的预测可供比较：{reason}</translation>
    </message>
    <message>
        <source>{measured} · predicted {predicted}</source>
        <translation>{measured} · 预测 {predicted}</translation>
    </message>
    <message>
        <source>Predicted peak {predicted} against {measured} measured at step {step}: {error}% off</source>
        <translation>预测峰值 {predicted}，第 {step} 步测得 {measured}：相差 {error}%</translation>
    </message>
    <message>
        <source>Predicted step {predicted} against {measured} measured at step {step}: {error}% off</source>
        <translation>预测单步 {predicted}，第 {step} 步测得 {measured}：相差 {error}%</translation>
    </message>
    <message>
        <source>The same step predicted without running it: {what}, traced on tensors without memory in {seconds} s. Each part is predicted as it was measured: gradients once the step is done, activations as {how}.</source>
        <translation>不运行而预测的同一步：{what}，在无内存的张量上追踪，用时 {seconds} 秒。每一部分都按测量时的口径预测：梯度取该步完成之后，激活取{how}。</translation>
    </message>
    <message>
        <source>the step&apos;s peak less the other parts</source>
        <translation>该步峰值减去其他部分</translation>
    </message>
    <message>
        <source>the bytes autograd saved for backward (this device keeps no peak), summed with the others</source>
        <translation>自动求导为反向传播保存的字节数（此设备不记录峰值），与其他部分相加</translation>
    </message>
    <message>
        <source>The error compares the two totals, in % of the measured one. The predicted peak of live tensors, at one moment of the step, is {peak}.</source>
        <translation>误差比较两个总量，以测得值的百分比表示。预测的存活张量峰值（该步中的某一时刻）为 {peak}。</translation>
    </message>
    <message>
        <source>Predicted once in the training process, at step {step}, from its model and the inputs its forward received. Allocator overhead and the CUDA context are not in it.</source>
        <translation>在训练进程中于第 {step} 步预测一次，依据其模型和前向计算收到的输入。不包括分配器开销和 CUDA 上下文。</translation>
    </message>
    <message>
        <source>The dataset kept on the device ({size}) is no part of a step: left out of both.</source>
        <translation>保存在设备上的数据集（{size}）不属于任何一步：两边都不计入。</translation>
    </message>
</context>
<context>
    <name>PresetRow</name>
    <message>
        <source>no preset: every setting as you set it. Choosing none after a preset puts the settings presets change back to their defaults</source>
        <translation>不使用预设：每项设置都按你的设定。选过预设之后再选“无”，会把预设改动过的设置恢复为默认值</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>A named set of settings (gpu-train-monitor presets lists them); any setting can be changed after choosing one</source>
        <translation>一组有名字的设置（gpu-train-monitor presets 会列出它们）；选定后仍可修改任何一项设置</translation>
    </message>
</context>
<context>
    <name>RankLauncher</name>
    <message>
        <source>could not start {count} processes: {reason}</source>
        <translation>无法启动 {count} 个进程：{reason}</translation>
    </message>
    <message>
        <source>could not start the run on {host}: {reason}</source>
        <translation>无法在 {host} 上启动运行：{reason}</translation>
    </message>
    <message>
        <source>could not start the script: {reason}</source>
        <translation>无法启动脚本：{reason}</translation>
    </message>
    <message>
        <source>it has not started training yet</source>
        <translation>它尚未开始训练</translation>
    </message>
    <message>
        <source>the run store cannot be read</source>
        <translation>无法读取运行记录库</translation>
    </message>
</context>
<context>
    <name>RatePlot</name>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
</context>
<context>
    <name>RemoteConnection</name>
    <message>
        <source>gpu-train-monitor is not installed on {host} (its shell could not run `{command}`): install it there (pip install . in a clone of the project), or name the command that runs it as the Agent command of File ▸ Connect to a machine…, e.g. ~/venv/bin/gpu-train-monitor agent</source>
        <translation>{host} 上没有安装 gpu-train-monitor（其 shell 无法运行 `{command}`）：请在那里安装（在项目的克隆中执行 pip install .），或在“文件 ▸ 连接到机器…”的“代理命令”中填写运行它的命令，例如 ~/venv/bin/gpu-train-monitor agent</translation>
    </message>
</context>
<context>
    <name>RemoteMachineControls</name>
    <message>
        <source>Connect to a machine…</source>
        <translation>连接到一台机器…</translation>
    </message>
    <message>
        <source>Watch and drive the GPUs of another machine over SSH (nothing listens on a port)</source>
        <translation>通过 SSH 监视并操作另一台机器的 GPU（不监听任何端口）</translation>
    </message>
    <message>
        <source>Disconnect</source>
        <translation>断开连接</translation>
    </message>
    <message>
        <source>Close the connection; runs started there go on</source>
        <translation>关闭连接；在那里启动的运行会继续</translation>
    </message>
    <message>
        <source>cannot connect to {host}: {problem}</source>
        <translation>无法连接到 {host}：{problem}</translation>
    </message>
    <message>
        <source>connecting to {host} over SSH…</source>
        <translation>正在通过 SSH 连接到 {host}…</translation>
    </message>
    <message>
        <source>disconnected from {host}; runs started there go on</source>
        <translation>已与 {host} 断开；在那里启动的运行会继续</translation>
    </message>
    <message>
        <source>reconnected to {host}</source>
        <translation>已重新连接到 {host}</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>{spec} ({name})</source>
        <translation>{spec}（{name}）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>connected to {host} ({name}, gpu-train-monitor {version}); its devices: {devices}</source>
        <translation>已连接到 {host}（{name}，gpu-train-monitor {version}）；它的设备：{devices}</translation>
    </message>
    <message>
        <source>could not connect to {host}: {problem}</source>
        <translation>无法连接到 {host}：{problem}</translation>
    </message>
    <message>
        <source>the connection to {host} dropped ({problem}); reconnecting, runs there go on</source>
        <translation>与 {host} 的连接已断开（{problem}）；正在重新连接，那里的运行会继续</translation>
    </message>
    <message>
        <source>{host} has no NVML readings for {device} (NVIDIA GPUs with a driver only).</source>
        <translation>{host} 没有 {device} 的 NVML 读数（仅限装有驱动的 NVIDIA GPU）。</translation>
    </message>
    <message>
        <source>Only on this machine&apos;s devices: the selected device is on {host}</source>
        <translation>仅适用于本机设备：所选设备在 {host} 上</translation>
    </message>
</context>
<context>
    <name>RetryMarks</name>
    <message>
        <source>{count} allocation retries</source>
        <translation>{count} 次分配重试</translation>
    </message>
</context>
<context>
    <name>RunButtons</name>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Clear cache</source>
        <translation>清空缓存</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>PyTorch is still loading</source>
        <translation>PyTorch 仍在加载</translation>
    </message>
    <message>
        <source>A batch-size search is running: it measures memory, so training waits</source>
        <translation>批大小探测正在进行：它要测量显存，训练需等它结束</translation>
    </message>
    <message>
        <source>Start training</source>
        <translation>开始训练</translation>
    </message>
    <message>
        <source>Race 2 to 4 variations of these settings, one after another, each for the same steps</source>
        <translation>依次运行这些设置的 2 到 4 个变体，每个运行相同的步数，进行对比</translation>
    </message>
    <message>
        <source>A run is under way</source>
        <translation>已有运行正在进行</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Pause or resume at the next step boundary</source>
        <translation>在下一步结束时暂停或继续</translation>
    </message>
    <message>
        <source>Stop at the next step boundary</source>
        <translation>在下一步结束时停止</translation>
    </message>
    <message>
        <source>Return cached, unused blocks to the driver and show what that freed</source>
        <translation>将缓存中未使用的显存块归还给驱动，并显示释放了多少</translation>
    </message>
    <message>
        <source>The CPU has no caching allocator: there is no cache to clear</source>
        <translation>CPU 没有缓存分配器：没有可清空的缓存</translation>
    </message>
    <message>
        <source>{tip} ({keys})</source>
        <translation>{tip}（{keys}）</translation>
    </message>
    <message>
        <source>Estimated time: {estimate}</source>
        <translation>预计用时：{estimate}</translation>
    </message>
</context>
<context>
    <name>RunControlRow</name>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Clear cache</source>
        <translation>清空缓存</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
</context>
<context>
    <name>RunController</name>
    <message>
        <source>a run on {host} is followed through the run store, and this window records nothing</source>
        <translation>{host} 上的运行通过运行记录库跟随，本窗口不记录任何内容</translation>
    </message>
    <message>
        <source>a run of {count} processes is followed through the run store, and this window records nothing (start it with --runs-db PATH)</source>
        <translation>{count} 个进程的运行要通过运行记录库来跟踪，而本窗口不记录任何运行（请用 --runs-db PATH 启动）</translation>
    </message>
    <message>
        <source>a watched script is followed through the run store, and this window records nothing</source>
        <translation>被观察的脚本通过运行存储来跟踪，本窗口不记录任何内容</translation>
    </message>
</context>
<context>
    <name>RunEdits</name>
    <message>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <source>Give the selected run a name</source>
        <translation>为选中的运行命名</translation>
    </message>
    <message>
        <source>Note…</source>
        <translation>备注…</translation>
    </message>
    <message>
        <source>Write a note on the selected run</source>
        <translation>为选中的运行写备注</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Delete the selected runs and everything recorded for them (asks first)</source>
        <translation>删除选中的运行及其全部记录（会先确认）</translation>
    </message>
    <message>
        <source>Export run</source>
        <translation>导出运行</translation>
    </message>
    <message>
        <source>Export the selected run as JSON, CSV or a TensorBoard log dir</source>
        <translation>将选中的运行导出为 JSON、CSV 或 TensorBoard 日志目录</translation>
    </message>
    <message>
        <source>exporting {what}…: one export at a time</source>
        <translation>正在导出{what}…：一次只能进行一个导出</translation>
    </message>
    <message>
        <source>Rename run</source>
        <translation>重命名运行</translation>
    </message>
    <message>
        <source>Name of run #{id} (empty: no name):</source>
        <translation>运行 #{id} 的名称（留空：不命名）：</translation>
    </message>
    <message>
        <source>Note on run</source>
        <translation>运行备注</translation>
    </message>
    <message>
        <source>Note on run {run}:</source>
        <translation>运行 {run} 的备注：</translation>
    </message>
    <message>
        <source>Delete run</source>
        <translation>删除运行</translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>删除多个运行</translation>
    </message>
    <message>
        <source>Delete run {run} ({model} on {device}, {when}, {status}, {steps} steps) and everything recorded for it? This cannot be undone.</source>
        <translation>删除运行 {run}（{device} 上的 {model}，{when}，{status}，{steps} 步）及其全部记录？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Delete {count} runs ({runs}) and everything recorded for them? This cannot be undone.</source>
        <translation>删除 {count} 个运行（{runs}）及其全部记录？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Export run #{id} as JSON</source>
        <translation>将运行 #{id} 导出为 JSON</translation>
    </message>
    <message>
        <source>Export run #{id}: choose a folder</source>
        <translation>导出运行 #{id}：选择文件夹</translation>
    </message>
    <message>
        <source>still exporting {what}: one export at a time, try again when it is done</source>
        <translation>仍在导出{what}：一次只能进行一个导出，请在完成后再试</translation>
    </message>
    <message>
        <source>exporting {what}…</source>
        <translation>正在导出{what}…</translation>
    </message>
    <message>
        <source>exported run {run_id} to {folder}: {files} (partial: the run is live, exported up to step {step})</source>
        <translation>已将运行 {run_id} 导出到 {folder}：{files}（不完整：该运行仍在进行，导出到第 {step} 步为止）</translation>
    </message>
    <message>
        <source>exported run {run_id} to {folder}: {files}</source>
        <translation>已将运行 {run_id} 导出到 {folder}：{files}</translation>
    </message>
    <message>
        <source>export failed: {why}</source>
        <translation>导出失败：{why}</translation>
    </message>
</context>
<context>
    <name>RunExporter</name>
    <message>
        <source>the export failed</source>
        <translation>导出失败</translation>
    </message>
</context>
<context>
    <name>RunHistoryModel</name>
    <message>
        <source>note: {note}</source>
        <translation>备注：{note}</translation>
    </message>
    <message>
        <source>recorded by pid {pid} on {host}, resumed {resumes}x</source>
        <translation>由 {host} 上的进程 {pid} 记录，已恢复 {resumes} 次</translation>
    </message>
    <message>
        <source>recorded by pid {pid} on {host}</source>
        <translation>由 {host} 上的进程 {pid} 记录</translation>
    </message>
    <message>
        <source>started {time}</source>
        <translation>开始于 {time}</translation>
    </message>
    <message>
        <source>started {time}, {duration} long</source>
        <translation>开始于 {time}，历时 {duration}</translation>
    </message>
    <message>
        <source>copied from {origin}, where it trained on {host}</source>
        <translation>复制自 {origin}，在 {host} 上训练</translation>
    </message>
    <message>
        <source>recorded on {host}</source>
        <translation>记录于 {host}</translation>
    </message>
    <message>
        <source>recorded on this machine ({host})</source>
        <translation>记录于本机（{host}）</translation>
    </message>
    <message>
        <source>peak allocated {allocated}, peak reserved {reserved}</source>
        <translation>已分配峰值 {allocated}，已保留峰值 {reserved}</translation>
    </message>
    <message>
        <source>Overlay this run on the live loss and memory plots</source>
        <translation>将此运行叠加到实时损失和显存图表上</translation>
    </message>
</context>
<context>
    <name>RunLoader</name>
    <message>
        <source>the run store {path} is not there any more</source>
        <translation>运行记录库 {path} 已不存在</translation>
    </message>
    <message>
        <source>reading the run was cancelled</source>
        <translation>已取消读取该运行</translation>
    </message>
    <message>
        <source>the run could not be read</source>
        <translation>无法读取该运行</translation>
    </message>
</context>
<context>
    <name>RunResume</name>
    <message>
        <source>Resume from checkpoint…</source>
        <translation>从检查点恢复…</translation>
    </message>
    <message>
        <source>Continue the selected run from one of the checkpoints it saved, listed by step</source>
        <translation>从所选运行保存的某个检查点继续该运行，按步数列出</translation>
    </message>
    <message>
        <source>Not while a run or a batch-size search is under way</source>
        <translation>运行或批大小探测进行期间不可用</translation>
    </message>
    <message>
        <source>run {run} is still training</source>
        <translation>运行 {run} 仍在训练</translation>
    </message>
    <message>
        <source>cannot list run {run}&apos;s checkpoints: {error}</source>
        <translation>无法列出运行 {run} 的检查点：{error}</translation>
    </message>
    <message>
        <source>run {run} saved no checkpoint to resume from</source>
        <translation>运行 {run} 没有保存可供恢复的检查点</translation>
    </message>
    <message>
        <source>run {run}&apos;s {count} checkpoints are gone (deleted or moved)</source>
        <translation>运行 {run} 的 {count} 个检查点已不存在（被删除或移动）</translation>
    </message>
    <message>
        <source>Resume run {run}</source>
        <translation>恢复运行 {run}</translation>
    </message>
    <message>
        <source>Resume from the checkpoint saved at:</source>
        <translation>从以下步数保存的检查点恢复：</translation>
    </message>
</context>
<context>
    <name>RunView</name>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>try a smaller batch size, or set {setting} to {shrink}</source>
        <translation>请尝试更小的批大小，或将 {setting} 设为 {shrink}</translation>
    </message>
    <message>
        <source>could not run: {error}</source>
        <translation>无法运行：{error}</translation>
    </message>
    <message>
        <source>the run crashed: {error}</source>
        <translation>运行崩溃：{error}</translation>
    </message>
</context>
<context>
    <name>SettingsForm</name>
    <message>
        <source>Device and model</source>
        <translation>设备与模型</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Look for devices again</source>
        <translation>重新查找设备</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Choose the folder that holds the dataset</source>
        <translation>选择存放数据集的文件夹</translation>
    </message>
    <message>
        <source>auto ({device})</source>
        <translation>自动（{device}）</translation>
    </message>
    <message>
        <source>{spec}: {name} ({capacity})</source>
        <translation>{spec}：{name}（{capacity}）</translation>
    </message>
    <message>
        <source>{name}, {capacity}</source>
        <translation>{name}，{capacity}</translation>
    </message>
    <message>
        <source>{spec} on {host}: {name} ({capacity})</source>
        <translation>{host} 上的 {spec}：{name}（{capacity}）</translation>
    </message>
    <message>
        <source>{spec} of {host} ({host_name}): {name}, {capacity}</source>
        <translation>{host}（{host_name}）的 {spec}：{name}，{capacity}</translation>
    </message>
    <message>
        <source>{spec} (not on this machine)</source>
        <translation>{spec}（不在本机上）</translation>
    </message>
    <message>
        <source>{spec} (not found yet)</source>
        <translation>{spec}（尚未找到）</translation>
    </message>
    <message>
        <source>the settings could not be checked: {error}</source>
        <translation>无法检查设置：{error}</translation>
    </message>
    <message>
        <source>the preset was not applied: {reason}</source>
        <translation>预设未应用：{reason}</translation>
    </message>
    <message>
        <source>Dataset folder</source>
        <translation>数据集文件夹</translation>
    </message>
</context>
<context>
    <name>SnapshotTimelinePlot</name>
    <message>
        <source>Active memory over the trace</source>
        <translation>整个记录中的活动内存</translation>
    </message>
    <message>
        <source>allocator event</source>
        <translation>分配器事件</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>live allocations</source>
        <translation>存活的分配</translation>
    </message>
    <message>
        <source>reserved</source>
        <translation>已保留</translation>
    </message>
    <message>
        <source>peak {size}</source>
        <translation>峰值 {size}</translation>
    </message>
    <message>
        <source>Point at the timeline to read its bytes; wheel or drag to zoom and pan.</source>
        <translation>指向时间线即可读出该处的字节数；滚轮或拖动可缩放和平移。</translation>
    </message>
    <message>
        <source>after event {event}: {live} live, {reserved} reserved</source>
        <translation>事件 {event} 之后：存活 {live}，已保留 {reserved}</translation>
    </message>
</context>
<context>
    <name>SnapshotWindow</name>
    <message>
        <source>Memory snapshot</source>
        <translation>内存快照</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Allocated at</source>
        <translation>分配于</translation>
    </message>
    <message>
        <source>Where (innermost frame of your code first)</source>
        <translation>位置（你的代码中最内层的帧在前）</translation>
    </message>
    <message>
        <source>Memory snapshot: {name}</source>
        <translation>内存快照：{name}</translation>
    </message>
    <message>
        <source>Reading {path}…</source>
        <translation>正在读取 {path}…</translation>
    </message>
    <message>
        <source>The {count} largest allocations live at the peak (pick one to shade its life on the timeline)</source>
        <translation>峰值时存活的最大 {count} 个分配（选中一行，即可在时间线上标出它的存活区间）</translation>
    </message>
    <message>
        <source>the file could not be read</source>
        <translation>无法读取该文件</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak {peak}&lt;/b&gt; of live allocations on cuda:{device}</source>
        <translation>&lt;b&gt;峰值 {peak}&lt;/b&gt;：cuda:{device} 上存活的分配</translation>
    </message>
    <message>
        <source>{events} allocator events</source>
        <translation>{events} 个分配器事件</translation>
    </message>
    <message>
        <source>{reserved} reserved at the dump</source>
        <translation>转储时已保留 {reserved}</translation>
    </message>
    <message>
        <source>{start} already live when the trace began</source>
        <translation>记录开始时已有 {start} 存活</translation>
    </message>
    <message>
        <source>{count} out of memory in the trace</source>
        <translation>记录中有 {count} 次内存不足</translation>
    </message>
    <message>
        <source>No stack frames were recorded: record with torch.cuda.memory._record_memory_history(stacks=&apos;python&apos;) to see where each allocation was made.</source>
        <translation>未记录调用栈：用 torch.cuda.memory._record_memory_history(stacks=&apos;python&apos;) 记录，即可看到每个分配发生在哪里。</translation>
    </message>
    <message>
        <source>before the trace</source>
        <translation>记录开始之前</translation>
    </message>
    <message>
        <source>event {event}</source>
        <translation>事件 {event}</translation>
    </message>
    <message>
        <source>only PyTorch&apos;s own frames</source>
        <translation>只有 PyTorch 自身的帧</translation>
    </message>
    <message>
        <source>no stack recorded</source>
        <translation>未记录调用栈</translation>
    </message>
</context>
<context>
    <name>StackedBar</name>
    <message>
        <source>{name}: {size} ({share}%)</source>
        <translation>{name}：{size}（{share}%）</translation>
    </message>
    <message>
        <source>no step measured yet</source>
        <translation>尚未测量任何一步</translation>
    </message>
</context>
<context>
    <name>StatsPanel</name>
    <message>
        <source>Step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>ETA</source>
        <translation>预计剩余</translation>
    </message>
    <message>
        <source>Memory now</source>
        <translation>当前占用</translation>
    </message>
    <message>
        <source>Peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>Allocated by tensors now (on the CPU: process RSS)</source>
        <translation>张量当前已分配的显存（在 CPU 上：进程 RSS）</translation>
    </message>
    <message>
        <source>Highest allocated since the run started (on the CPU: peak RSS)</source>
        <translation>本次运行开始以来的已分配峰值（在 CPU 上：RSS 峰值）</translation>
    </message>
    <message>
        <source>Time left at the median speed</source>
        <translation>按中位速度估算的剩余时间</translation>
    </message>
    <message>
        <source>per rank</source>
        <translation>各进程</translation>
    </message>
    <message>
        <source>Each rank&apos;s training images per second over the last report, by rank</source>
        <translation>最近一次报告期间各进程每秒训练的图像数，按进程编号排列</translation>
    </message>
    <message>
        <source>no total</source>
        <translation>无总数</translation>
    </message>
    <message>
        <source>The script does not say how many steps it will train</source>
        <translation>脚本没有说明它将训练多少步</translation>
    </message>
</context>
<context>
    <name>StepTimeView</name>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>ms per step</source>
        <translation>每步毫秒</translation>
    </message>
    <message>
        <source>on the GPU</source>
        <translation>在 GPU 上</translation>
    </message>
    <message>
        <source>Timed with CUDA events on sampled steps; the copy runs inside the data phase on the GPU.</source>
        <translation>在抽样的步上用 CUDA 事件计时；在 GPU 上，复制包含在数据阶段之内。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Latest report&lt;/b&gt;</source>
        <translation>&lt;b&gt;最新报告&lt;/b&gt;</translation>
    </message>
    <message>
        <source>whole step</source>
        <translation>整步</translation>
    </message>
    <message>
        <source>Each bar: one report&apos;s median step, split by phase on the host&apos;s clock (reports are averaged together when there are more than the plot&apos;s width shows)</source>
        <translation>每根柱：一次报告的中位步，按阶段拆分，按主机时钟计（报告多于图宽能显示的数量时会取平均合并）</translation>
    </message>
    <message>
        <source>This run&apos;s reports carry no step phases: its step time cannot be split.</source>
        <translation>此运行的报告不含步阶段：无法拆分其步时间。</translation>
    </message>
    <message>
        <source>No step time yet: each report after the run&apos;s first splits its steps by phase.</source>
        <translation>尚无步时间：运行首次报告之后的每次报告会按阶段拆分其步。</translation>
    </message>
    <message>
        <source>&lt;b&gt;At step {step}&lt;/b&gt;</source>
        <translation>&lt;b&gt;第 {step} 步&lt;/b&gt;</translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation>{ms} 毫秒</translation>
    </message>
    <message>
        <source>{percent}%</source>
        <translation>{percent}%</translation>
    </message>
</context>
<context>
    <name>StepTimelinePlot</name>
    <message>
        <source>allocations and frees of the step, in order</source>
        <translation>本步的分配与释放（按顺序）</translation>
    </message>
    <message>
        <source>live</source>
        <translation>存活</translation>
    </message>
    <message>
        <source>Point at the step to read its bytes; wheel or drag to zoom.</source>
        <translation>指向该步即可读取其字节数；滚轮或拖动可缩放。</translation>
    </message>
    <message>
        <source>{count} other blocks</source>
        <translation>其他 {count} 个块</translation>
    </message>
    <message>
        <source>outside modules</source>
        <translation>模块之外</translation>
    </message>
    <message>
        <source>{phase} ends</source>
        <translation>{phase}结束</translation>
    </message>
    <message>
        <source>peak {size}</source>
        <translation>峰值 {size}</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>{name} {size}</source>
        <translation>{name} {size}</translation>
    </message>
    <message>
        <source>After allocation or free {event} ({phase}, {module}): {total} live: {parts}</source>
        <translation>第 {event} 次分配或释放之后（{phase}，{module}）：存活 {total}：{parts}</translation>
    </message>
</context>
<context>
    <name>StepTimelineView</name>
    <message>
        <source>activations (saved for backward)</source>
        <translation>激活值（为反向传播保存）</translation>
    </message>
    <message>
        <source>temporaries</source>
        <translation>临时张量</translation>
    </message>
    <message>
        <source>Colour by module</source>
        <translation>按模块着色</translation>
    </message>
    <message>
        <source>Colour the step by the block of the model running at each moment instead of by what holds it</source>
        <translation>按每一时刻正在运行的模型块为该步着色，而不是按持有内存的部分着色</translation>
    </message>
    <message>
        <source>The step&apos;s memory over time, measured at step {step} (the allocator&apos;s history)</source>
        <translation>该步显存随时间的变化，在第 {step} 步实测（分配器的历史记录）</translation>
    </message>
    <message>
        <source>The step&apos;s memory over time, predicted at batch {batch}</source>
        <translation>该步显存随时间的变化，按批次大小 {batch} 预测</translation>
    </message>
    <message>
        <source>The measured timeline is CUDA only (it is read from the CUDA allocator&apos;s history): this is the predicted one.</source>
        <translation>实测时间线仅限 CUDA（读取自 CUDA 分配器的历史记录）：此处显示的是预测的时间线。</translation>
    </message>
    <message>
        <source>Predicted until a step is measured: on CUDA the run records the allocator&apos;s history for its second sampled step, then for one step a minute.</source>
        <translation>在实测某一步之前显示预测值：在 CUDA 上，运行会为第二个采样步记录分配器的历史，之后每分钟记录一步。</translation>
    </message>
</context>
<context>
    <name>StoreLink</name>
    <message>
        <source>no run store at {path} yet</source>
        <translation>{path} 处还没有运行记录库</translation>
    </message>
    <message>
        <source>the run store {path} is read-only for this user: runs cannot be changed here</source>
        <translation>运行记录库 {path} 对当前用户只读：无法在这里修改运行</translation>
    </message>
</context>
<context>
    <name>StoredRunView</name>
    <message>
        <source>Run #{run_id} — GPU Training Monitor</source>
        <translation>运行 #{run_id} — GPU 训练监视器</translation>
    </message>
    <message>
        <source>Reading run {run_id} from {path}…</source>
        <translation>正在从 {path} 读取运行 {run_id}…</translation>
    </message>
    <message>
        <source>The run&apos;s start, epochs, cache clears, out-of-memory events and log lines.</source>
        <translation>运行的开始、每轮结果、缓存清空、显存不足事件和日志行。</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>the run store {path} is not there any more</source>
        <translation>运行记录库 {path} 已不存在</translation>
    </message>
    <message>
        <source>run {run_id} is no longer in the store (it was deleted)</source>
        <translation>运行 {run_id} 已不在运行记录库中（已被删除）</translation>
    </message>
    <message>
        <source>summary:</source>
        <translation>摘要：</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>reconnecting to {host}…</source>
        <translation>正在重新连接 {host}…</translation>
    </message>
    <message>
        <source>{title} ({state}) — GPU Training Monitor</source>
        <translation>{title}（{state}）— GPU 训练监视器</translation>
    </message>
</context>
<context>
    <name>WatchDialog</name>
    <message>
        <source>Watch a script</source>
        <translation>观察脚本</translation>
    </message>
    <message>
        <source>Watch a script on {host}</source>
        <translation>在 {host} 上监视脚本</translation>
    </message>
    <message>
        <source>Runs a PyTorch training script of yours unchanged and follows it live here: its steps, losses and memory, recorded in the Runs tab. Stop, Pause and Clear cache act on it at its next optimizer step.</source>
        <translation>原样运行你的 PyTorch 训练脚本并在这里实时跟踪：它的步骤、损失和内存，记录在“运行”标签页中。停止、暂停和清空缓存在它的下一个优化器步骤生效。</translation>
    </message>
    <message>
        <source>train.py</source>
        <translation>train.py</translation>
    </message>
    <message>
        <source>--epochs 3 --lr 0.01 (as in a terminal)</source>
        <translation>--epochs 3 --lr 0.01（与在终端中一样）</translation>
    </message>
    <message>
        <source>the script&apos;s folder</source>
        <translation>脚本所在的文件夹</translation>
    </message>
    <message>
        <source>optional: the script&apos;s name</source>
        <translation>可选：脚本的名称</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>the home folder there</source>
        <translation>那里的主文件夹</translation>
    </message>
    <message>
        <source>Script:</source>
        <translation>脚本：</translation>
    </message>
    <message>
        <source>Arguments:</source>
        <translation>参数：</translation>
    </message>
    <message>
        <source>Working folder:</source>
        <translation>工作文件夹：</translation>
    </message>
    <message>
        <source>Run name:</source>
        <translation>运行名称：</translation>
    </message>
    <message>
        <source>Watch</source>
        <translation>观察</translation>
    </message>
    <message>
        <source>The training script to watch</source>
        <translation>要观察的训练脚本</translation>
    </message>
    <message>
        <source>Python scripts (*.py);;All files (*)</source>
        <translation>Python 脚本 (*.py);;所有文件 (*)</translation>
    </message>
    <message>
        <source>The folder the script runs in</source>
        <translation>脚本运行时所在的文件夹</translation>
    </message>
    <message>
        <source>the home folder</source>
        <translation>主文件夹</translation>
    </message>
    <message>
        <source>Runs {command} on {host} in {folder}</source>
        <translation>在 {host} 的 {folder} 中运行 {command}</translation>
    </message>
    <message>
        <source>Runs {command} in {folder}</source>
        <translation>在 {folder} 中运行 {command}</translation>
    </message>
</context>
<context>
    <name>WhatIfTable</name>
    <message>
        <source>What if: waiting for PyTorch to load…</source>
        <translation>假设分析：正在等待 PyTorch 加载…</translation>
    </message>
    <message>
        <source>What if: worked out after the run</source>
        <translation>假设分析：运行结束后计算</translation>
    </message>
    <message>
        <source>What if: no prediction while the settings cannot run</source>
        <translation>假设分析：设置无法运行时不做预测</translation>
    </message>
    <message>
        <source>What if: predicting each change…</source>
        <translation>假设分析：正在逐项预测…</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>改动</translation>
    </message>
    <message>
        <source>Predicted peak</source>
        <translation>预测峰值</translation>
    </message>
    <message>
        <source>Saves (−: costs)</source>
        <translation>节省（−：增加）</translation>
    </message>
    <message>
        <source>Largest batch that fits</source>
        <translation>能放下的最大批量</translation>
    </message>
    <message>
        <source>What if: no prediction ({reason})</source>
        <translation>假设分析：无预测（{reason}）</translation>
    </message>
    <message>
        <source>As set: peak {peak} of {capacity}, {verdict}; the largest batch that fits: {fits}.</source>
        <translation>按当前设置：峰值 {peak}，容量 {capacity}，{verdict}；能放下的最大批量：{fits}。</translation>
    </message>
    <message>
        <source>The settings on the left with one change at a time, each predicted without using memory. Fits: under the capacity less the {margin}% margin the batch-size finder keeps free.</source>
        <translation>左侧的设置每次只改动一处，各自在不占用内存的情况下预测。能放下：低于容量减去批量大小查找器保留的 {margin}% 余量。</translation>
    </message>
    <message>
        <source>not on this device</source>
        <translation>此设备不支持</translation>
    </message>
    <message>
        <source>no prediction: {reason}</source>
        <translation>无预测：{reason}</translation>
    </message>
    <message>
        <source>{peak}, {verdict}</source>
        <translation>{peak}，{verdict}</translation>
    </message>
    <message>
        <source>saves {size}</source>
        <translation>节省 {size}</translation>
    </message>
    <message>
        <source>costs {size}</source>
        <translation>增加 {size}</translation>
    </message>
    <message>
        <source>no change</source>
        <translation>无改动</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>{saves}; less in {blocks}</source>
        <translation>{saves}；减少最多的块：{blocks}</translation>
    </message>
    <message>
        <source>Predicted with and without checkpointing, by module: the blocks holding the most less</source>
        <translation>按模块比较开启与关闭激活检查点的预测：占用减少最多的块</translation>
    </message>
    <message>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <source>none (not even 1)</source>
        <translation>没有（连 1 都不行）</translation>
    </message>
    <message>
        <source>{batch} (the whole training set)</source>
        <translation>{batch}（整个训练集）</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>能放下</translation>
    </message>
    <message>
        <source>tight</source>
        <translation>很紧</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>放不下</translation>
    </message>
</context>
<context>
    <name>WindowState</name>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>stopping</source>
        <translation>正在停止</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>diverged</source>
        <translation>已发散</translation>
    </message>
    <message>
        <source>oom</source>
        <translation>显存不足</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
</context>
<context>
    <name>about</name>
    <message>
        <source>Copy system info (Help menu) puts these lines on the clipboard for a bug report.</source>
        <translation>“复制系统信息”（帮助菜单）会把这些内容复制到剪贴板，用于错误报告。</translation>
    </message>
    <message>
        <source>Train a PyTorch model and watch the GPU live: loss, throughput and device memory.</source>
        <translation>训练 PyTorch 模型并实时观察 GPU：损失、吞吐量和显存。</translation>
    </message>
    <message>
        <source>GPU Training Monitor</source>
        <translation>GPU 训练监视器</translation>
    </message>
    <message>
        <source>About GPU Training Monitor</source>
        <translation>关于 GPU 训练监视器</translation>
    </message>
</context>
<context>
    <name>app</name>
    <message>
        <source>window shown {shown} s after launch; PyTorch ready after {ready} s</source>
        <translation>窗口在启动后 {shown} 秒显示；PyTorch 在 {ready} 秒后就绪</translation>
    </message>
    <message>
        <source>PyTorch could not be loaded, so nothing can train: {error}. Reinstall with `pip install -e .`</source>
        <translation>无法加载 PyTorch，因此无法训练：{error}。请用 `pip install -e .` 重新安装</translation>
    </message>
</context>
<context>
    <name>breakdown_view</name>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Weights and buffers of the model</source>
        <translation>模型的权重和缓冲区</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>One gradient per trainable parameter, alive from backward to the next step</source>
        <translation>每个可训练参数一个梯度，从反向传播一直保留到下一步</translation>
    </message>
    <message>
        <source>optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>SGD momentum buffers or AdamW&apos;s two moments per parameter</source>
        <translation>每个参数的 SGD 动量缓冲区，或 AdamW 的两个矩估计</translation>
    </message>
    <message>
        <source>dataset on device</source>
        <translation>设备上的数据集</translation>
    </message>
    <message>
        <source>The resident placement&apos;s whole dataset on the device, with the augmented copy each epoch makes</source>
        <translation>常驻设备放置方式下设备上的整个数据集，以及每轮生成的增强副本</translation>
    </message>
    <message>
        <source>batch</source>
        <translation>批次</translation>
    </message>
    <message>
        <source>The step&apos;s input images and labels as the model receives them</source>
        <translation>本步送入模型的输入图像和标签</translation>
    </message>
    <message>
        <source>activations + workspace</source>
        <translation>激活值 + 工作区</translation>
    </message>
    <message>
        <source>Outputs kept for backward and temporary kernel workspace: grows with the batch size</source>
        <translation>为反向传播保留的输出和算子的临时工作区：随批大小增长</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
</context>
<context>
    <name>compare_menu</name>
    <message>
        <source>line {number}: {problem}</source>
        <translation>第 {number} 行：{problem}</translation>
    </message>
    <message>
        <source>write {least} to {most} lines, one run each (this has {count})</source>
        <translation>请写 {least} 到 {most} 行，每行一个运行（当前为 {count} 行）</translation>
    </message>
    <message>
        <source>{item}: every run of a comparison has the same {setting} (they race over the same steps); set it once, in the form</source>
        <translation>{item}：比较中的每个运行都使用相同的 {setting}（它们在相同的步数上比赛）；请在表单中设置一次</translation>
    </message>
</context>
<context>
    <name>compare_race</name>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>not run</source>
        <translation>未运行</translation>
    </message>
    <message>
        <source>ended without a result</source>
        <translation>未得出结果即结束</translation>
    </message>
    <message>
        <source>the comparison stopped before its turn</source>
        <translation>对比在轮到该运行之前已停止</translation>
    </message>
    <message>
        <source>the comparison failed before its turn</source>
        <translation>对比在轮到该运行之前已失败</translation>
    </message>
    <message>
        <source>the comparison completed before its turn</source>
        <translation>对比在轮到该运行之前已完成</translation>
    </message>
    <message>
        <source>the comparison ended before its turn</source>
        <translation>对比在轮到该运行之前已结束</translation>
    </message>
    <message>
        <source>step {step} / {total}</source>
        <translation>第 {step} / {total} 步</translation>
    </message>
    <message>
        <source>last loss {loss}</source>
        <translation>最终损失 {loss}</translation>
    </message>
    <message>
        <source>compiled in {seconds} s (not in images/s)</source>
        <translation>编译用时 {seconds} s（不计入图像/秒）</translation>
    </message>
    <message>
        <source>{number}. {label}: waits its turn</source>
        <translation>{number}. {label}：排队等待中</translation>
    </message>
    <message>
        <source>{number}. {label}: {status}, {facts}</source>
        <translation>{number}. {label}：{status}，{facts}</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>no {setting}</source>
        <translation>无 {setting}</translation>
    </message>
    <message>
        <source>amp {precision}</source>
        <translation>混合精度 {precision}</translation>
    </message>
    <message>
        <source>{attention} attention</source>
        <translation>{attention}注意力</translation>
    </message>
    <message>
        <source>base</source>
        <translation>基准</translation>
    </message>
    <message>
        <source>{number}. {label}: {status}: {message}</source>
        <translation>{number}. {label}：{status}：{message}</translation>
    </message>
    <message>
        <source>{number}. {label}: {status}</source>
        <translation>{number}. {label}：{status}</translation>
    </message>
    <message>
        <source>no steady speed measured</source>
        <translation>未测得稳定速度</translation>
    </message>
    <message>
        <source>{rate} images/s (p10 to p90: {low} to {high})</source>
        <translation>{rate} 图像/秒（p10 至 p90：{low} 至 {high}）</translation>
    </message>
    <message>
        <source>{ratio} the slowest</source>
        <translation>为最慢者的 {ratio}</translation>
    </message>
</context>
<context>
    <name>core_text</name>
    <message>
        <source>no autocast</source>
        <translation>无自动混合精度</translation>
    </message>
    <message>
        <source>{dtype} autocast</source>
        <translation>{dtype} 自动混合精度</translation>
    </message>
    <message>
        <source>{field}: {detail}</source>
        <translation>{field}：{detail}</translation>
    </message>
</context>
<context>
    <name>form_applicability</name>
    <message>
        <source>pin_memory only speeds up copies to a GPU</source>
        <translation>pin_memory 只加快向 GPU 的拷贝</translation>
    </message>
    <message>
        <source>the CPU needs no copy to a device</source>
        <translation>CPU 不需要向设备拷贝数据</translation>
    </message>
    <message>
        <source>only the stream placement copies batches</source>
        <translation>只有流式加载放置方式才会拷贝批次</translation>
    </message>
    <message>
        <source>the resident placement keeps the data on the device: no loader workers</source>
        <translation>常驻设备放置方式把数据留在设备上：不需要数据加载进程</translation>
    </message>
    <message>
        <source>your own dataset&apos;s factory finds its own files</source>
        <translation>你自己的数据集由其工厂函数自行查找文件</translation>
    </message>
    <message>
        <source>the synthetic dataset needs no files</source>
        <translation>合成数据集不需要文件</translation>
    </message>
    <message>
        <source>only mnist, fashion-mnist and cifar10 can be downloaded</source>
        <translation>只有 mnist、fashion-mnist 和 cifar10 可以下载</translation>
    </message>
    <message>
        <source>AdamW has no momentum setting</source>
        <translation>AdamW 没有动量设置</translation>
    </message>
    <message>
        <source>only CUDA&apos;s caching allocator has segments to expand</source>
        <translation>只有 CUDA 缓存分配器有可扩展的段</translation>
    </message>
    <message>
        <source>one process already normalises over its whole batch (set more than one process)</source>
        <translation>单个进程本来就在整个批次上做归一化（请设置多于一个进程）</translation>
    </message>
    <message>
        <source>fp16 autocast needs a CUDA or MPS device</source>
        <translation>fp16 混合精度需要 CUDA 或 MPS 设备</translation>
    </message>
    <message>
        <source>float16 autocast + GradScaler</source>
        <translation>float16 混合精度 + 梯度缩放</translation>
    </message>
    <message>
        <source>bfloat16 autocast (no gradient scaler needed)</source>
        <translation>bfloat16 混合精度（无需梯度缩放）</translation>
    </message>
    <message>
        <source>only the synthetic datasets are generated</source>
        <translation>只有合成数据集是生成出来的</translation>
    </message>
    <message>
        <source>only a text dataset (synthetic-text, text:PATH) is cut into sequences</source>
        <translation>只有文本数据集（synthetic-text、text:PATH）才切分成序列</translation>
    </message>
    <message>
        <source>only the GPT models (gpt-tiny, gpt-small) take these</source>
        <translation>只有 GPT 模型（gpt-tiny、gpt-small）使用这些设置</translation>
    </message>
    <message>
        <source>a text dataset needs no data folder: a text file is named as text:PATH</source>
        <translation>文本数据集不需要数据文件夹：文本文件写作 text:PATH</translation>
    </message>
    <message>
        <source>Cannot run on this device: {problem}</source>
        <translation>无法在此设备上运行：{problem}</translation>
    </message>
    <message>
        <source>auto ({model} on the CPU of {host})</source>
        <translation>自动（{host} 的 CPU 上为 {model}）</translation>
    </message>
    <message>
        <source>auto ({model} on the GPU of {host})</source>
        <translation>自动（{host} 的 GPU 上为 {model}）</translation>
    </message>
    <message>
        <source>Not used: {reason}</source>
        <translation>未使用：{reason}</translation>
    </message>
    <message>
        <source>auto ({model} on this CPU)</source>
        <translation>自动（此 CPU 上为 {model}）</translation>
    </message>
    <message>
        <source>auto ({model} on this GPU)</source>
        <translation>自动（此 GPU 上为 {model}）</translation>
    </message>
</context>
<context>
    <name>form_text</name>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Processes</source>
        <translation>进程数</translation>
    </message>
    <message>
        <source>Sync BatchNorm</source>
        <translation>同步 BatchNorm</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <source>Width</source>
        <translation>宽度</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>Mixed precision</source>
        <translation>混合精度</translation>
    </message>
    <message>
        <source>channels_last</source>
        <translation>channels_last 内存格式</translation>
    </message>
    <message>
        <source>Activation checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>Expandable segments</source>
        <translation>可扩展段</translation>
    </message>
    <message>
        <source>torch.compile</source>
        <translation>torch.compile 编译</translation>
    </message>
    <message>
        <source>cuDNN benchmark</source>
        <translation>cuDNN 自动调优</translation>
    </message>
    <message>
        <source>Fused optimizer</source>
        <translation>融合优化器</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Data folder</source>
        <translation>数据文件夹</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Placement</source>
        <translation>数据放置</translation>
    </message>
    <message>
        <source>Workers</source>
        <translation>数据加载进程</translation>
    </message>
    <message>
        <source>pin_memory</source>
        <translation>锁页内存 (pin_memory)</translation>
    </message>
    <message>
        <source>non_blocking</source>
        <translation>非阻塞拷贝 (non_blocking)</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>Max steps</source>
        <translation>最大步数</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Momentum</source>
        <translation>动量</translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>On out of memory</source>
        <translation>显存不足时</translation>
    </message>
    <message>
        <source>Report every (s)</source>
        <translation>报告间隔 (s)</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>device to train on: auto, cpu, cuda, cuda:N or mps</source>
        <translation>用于训练的设备：自动、cpu、cuda、cuda:N 或 mps</translation>
    </message>
    <message>
        <source>folder holding the dataset files (default: the user data folder)</source>
        <translation>存放数据集文件的文件夹（默认：用户数据文件夹）</translation>
    </message>
    <message>
        <source>download the dataset into the data folder when it is missing</source>
        <translation>数据集不存在时下载到数据文件夹</translation>
    </message>
    <message>
        <source>Synthetic samples</source>
        <translation>合成样本数</translation>
    </message>
    <message>
        <source>Sequence length</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <source>preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>auto (resnet18 on a GPU, tiny-cnn on a CPU; for text gpt-small on a GPU, gpt-tiny on a CPU), tiny-cnn, resnet18 (CIFAR stem), speedrun-net (a small fast CIFAR net), gpt-tiny or gpt-small (a GPT for text), any torchvision classifier name, or your own: {spec_form} (or path/to/file.py:factory), a callable returning an nn.Module (given num_classes= and in_channels= when it takes them)</source>
        <translation>自动（GPU 上为 resnet18，CPU 上为 tiny-cnn；文本数据时 GPU 上为 gpt-small，CPU 上为 gpt-tiny）、tiny-cnn、resnet18（CIFAR 输入层）、speedrun-net（小而快的 CIFAR 网络）、gpt-tiny 或 gpt-small（用于文本的 GPT）、任意 torchvision 分类模型名，或你自己的模型：{spec_form}（或 path/to/file.py:factory），即一个返回 nn.Module 的可调用对象（它接受 num_classes= 和 in_channels= 时会传入这两个参数）</translation>
    </message>
    <message>
        <source>transformer blocks of a GPT model (default: its preset&apos;s)</source>
        <translation>GPT 模型的 Transformer 块数（默认：其预设值）</translation>
    </message>
    <message>
        <source>a GPT model&apos;s embedding width (default: its preset&apos;s)</source>
        <translation>GPT 模型的嵌入宽度（默认：其预设值）</translation>
    </message>
    <message>
        <source>a GPT model&apos;s attention heads (default: its preset&apos;s)</source>
        <translation>GPT 模型的注意力头数（默认：其预设值）</translation>
    </message>
    <message>
        <source>a GPT model&apos;s attention: fused (scaled_dot_product_attention) or plain (the softmax of QK^T, masked: it holds each head&apos;s T x T scores)</source>
        <translation>GPT 模型的注意力：融合（scaled_dot_product_attention）或朴素（对加了因果掩码的 QK^T 做 softmax：每个头都要保存 T x T 的分数）</translation>
    </message>
    <message>
        <source>dataset to train on: synthetic-text and text:PATH (a text file, read as bytes) are text; or your own: a callable (path/to/file.py:factory works too) returning a map-style Dataset of (image tensor CxHxW, int label), or a (train, val) tuple or a {{&apos;train&apos;, &apos;val&apos;}} dict of them</source>
        <translation>用于训练的数据集：synthetic-text 和 text:PATH（一个文本文件，按字节读取）是文本；或你自己的数据集：一个可调用对象（也可以写成 path/to/file.py:factory），返回由（图像张量 C×H×W，整数标签）组成的映射式数据集，或由两个这样的数据集组成的（训练集, 验证集）元组，或以 &apos;train&apos; 和 &apos;val&apos; 为键的字典</translation>
    </message>
    <message>
        <source>training samples generated for a synthetic dataset: images, or sequences for synthetic-text</source>
        <translation>为合成数据集生成的训练样本数：图像，或 synthetic-text 的序列</translation>
    </message>
    <message>
        <source>samples per training step: images, or sequences of text</source>
        <translation>每个训练步的样本数：图像，或文本序列</translation>
    </message>
    <message>
        <source>tokens in each sequence of a text dataset (a sample is one sequence)</source>
        <translation>文本数据集每个序列的词元数（一个样本就是一个序列）</translation>
    </message>
    <message>
        <source>passes over the training set (default: 1, or as many as &quot;{max_steps}&quot; needs when that is given; with both, the run stops at whichever comes first)</source>
        <translation>遍历训练集的轮数（默认：1；设置了“{max_steps}”时为它所需的轮数；两者都设置时，先到哪个就在哪里停止）</translation>
    </message>
    <message>
        <source>train for this many steps, over as many epochs as that takes (default: one epoch; with &quot;{epochs}&quot; too, the run stops at whichever comes first)</source>
        <translation>训练这么多步，需要多少轮就跑多少轮（默认：一轮；同时设置了“{epochs}”时，先到哪个就在哪里停止）</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>SGD momentum</source>
        <translation>SGD 动量</translation>
    </message>
    <message>
        <source>weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <source>automatic mixed precision</source>
        <translation>自动混合精度</translation>
    </message>
    <message>
        <source>use the channels_last memory format for the model and batches</source>
        <translation>模型和批次使用 channels_last 内存格式</translation>
    </message>
    <message>
        <source>keep only each block&apos;s input for backward and run its forward again there: less activation memory for more compute (torch.utils.checkpoint over the model&apos;s blocks)</source>
        <translation>反向传播只保留每个块的输入，并在那时重新运行其前向：用更多计算换更少的激活内存（对模型各块使用 torch.utils.checkpoint）</translation>
    </message>
    <message>
        <source>CUDA&apos;s caching allocator: on grows its segments in place instead of caching fixed blocks (less memory reserved but unused); auto keeps what PYTORCH_CUDA_ALLOC_CONF says (off when it says nothing); CUDA only</source>
        <translation>CUDA 缓存分配器：开启时原地扩展其段，而不是缓存固定块（已保留但未使用的内存更少）；自动则沿用 PYTORCH_CUDA_ALLOC_CONF 的设置（未设置时为关闭）；仅限 CUDA</translation>
    </message>
    <message>
        <source>compile the model with torch.compile (its compile time is reported apart and left out of images/s; needs a C++ compiler on the CPU, Triton on CUDA)</source>
        <translation>用 torch.compile 编译模型（编译时间单独报告，不计入图像/秒；在 CPU 上需要 C++ 编译器，在 CUDA 上需要 Triton）</translation>
    </message>
    <message>
        <source>let cuDNN time its convolution algorithms and keep the fastest (CUDA only; pays off when batch shapes do not change)</source>
        <translation>让 cuDNN 为各种卷积算法计时并选用最快的（仅限 CUDA；批次形状不变时才划算）</translation>
    </message>
    <message>
        <source>update all parameters in one fused kernel (on CUDA it also keeps fp16&apos;s gradient-scaler check on the device: no host sync per step)</source>
        <translation>用一个融合算子更新所有参数（在 CUDA 上还会把 fp16 梯度缩放的检查留在设备上：每步不需要与主机同步）</translation>
    </message>
    <message>
        <source>where the data lives: stream (DataLoader) or resident (on the device); auto picks resident when it fits</source>
        <translation>数据放在哪里：流式加载（用 DataLoader）或常驻设备（放在设备上）；自动：放得下时选择常驻设备</translation>
    </message>
    <message>
        <source>DataLoader worker processes (stream placement)</source>
        <translation>DataLoader 数据加载进程数（流式加载放置方式）</translation>
    </message>
    <message>
        <source>pin host batches for faster copies to a GPU (stream placement)</source>
        <translation>把主机上的批次放入锁页内存，加快向 GPU 的拷贝（流式加载放置方式）</translation>
    </message>
    <message>
        <source>copy batches to the GPU asynchronously (stream placement)</source>
        <translation>以非阻塞方式把批次拷贝到 GPU（流式加载放置方式）</translation>
    </message>
    <message>
        <source>random seed for data, model and shuffling</source>
        <translation>数据、模型和打乱顺序所用的随机种子</translation>
    </message>
    <message>
        <source>seconds between progress reports (no host sync: the losses arrive a report later on a GPU)</source>
        <translation>两次进度报告之间的秒数（不做主机同步：在 GPU 上损失值晚一次报告到达）</translation>
    </message>
    <message>
        <source>on out of memory: stop the run, or halve the batch and continue</source>
        <translation>显存不足时：停止运行，或把批大小减半后继续</translation>
    </message>
    <message>
        <source>processes training together, data-parallel (torch.distributed): one per GPU, or CPU processes where there is no GPU; batch_size is split evenly over them</source>
        <translation>一起进行数据并行训练的进程数（torch.distributed）：每块 GPU 一个，没有 GPU 时为 CPU 进程；batch_size 平均分给它们</translation>
    </message>
    <message>
        <source>synchronise BatchNorm statistics across processes (nproc &gt; 1): each step then normalises over the whole batch, as one process would</source>
        <translation>在进程之间同步 BatchNorm 统计量（nproc &gt; 1）：这样每一步都在整个批次上做归一化，和单个进程时一样</translation>
    </message>
    <message>
        <source>one of {choices}, text:PATH (a text file), or {spec_form}</source>
        <translation>{choices} 之一、text:PATH（一个文本文件），或 {spec_form}</translation>
    </message>
    <message>
        <source>one of {choices}, or {spec_form}</source>
        <translation>{choices} 之一，或 {spec_form}</translation>
    </message>
    <message>
        <source>one of {choices}</source>
        <translation>{choices} 之一</translation>
    </message>
    <message>
        <source>true or false</source>
        <translation>是或否</translation>
    </message>
    <message>
        <source>an integer from {low} to {high}, or {none}</source>
        <translation>{low} 到 {high} 之间的整数，或{none}</translation>
    </message>
    <message>
        <source>an integer from {low} to {high}</source>
        <translation>{low} 到 {high} 之间的整数</translation>
    </message>
    <message>
        <source>a number from {low} to {high}</source>
        <translation>{low} 到 {high} 之间的数</translation>
    </message>
    <message>
        <source>a string</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>{help} ({allowed})</source>
        <translation>{help}（{allowed}）</translation>
    </message>
    <message>
        <source>{label}: {detail}</source>
        <translation>{label}：{detail}</translation>
    </message>
</context>
<context>
    <name>form_widgets</name>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>synthetic</source>
        <translation>合成数据集</translation>
    </message>
    <message>
        <source>fused</source>
        <translation>融合</translation>
    </message>
    <message>
        <source>plain</source>
        <translation>朴素</translation>
    </message>
    <message>
        <source>stream</source>
        <translation>流式加载</translation>
    </message>
    <message>
        <source>resident</source>
        <translation>常驻设备</translation>
    </message>
    <message>
        <source>stop</source>
        <translation>停止运行</translation>
    </message>
    <message>
        <source>shrink</source>
        <translation>批大小减半后继续</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开启</translation>
    </message>
    <message>
        <source>auto (best available)</source>
        <translation>自动（最佳可用设备）</translation>
    </message>
    <message>
        <source>a name from the list, or {spec_form}</source>
        <translation>从列表中选择名称，或输入 {spec_form}</translation>
    </message>
    <message>
        <source>default: the user data folder</source>
        <translation>默认：用户数据文件夹</translation>
    </message>
</context>
<context>
    <name>launch_end</name>
    <message>
        <source>stopped before training started</source>
        <translation>在训练开始前已停止</translation>
    </message>
    <message>
        <source>it ended before its run was recorded</source>
        <translation>它在运行被记录之前就已结束</translation>
    </message>
    <message>
        <source>its processes were killed (exit code {code}) before the run finished; steps up to the last report are kept</source>
        <translation>其进程在运行结束前被终止（退出码 {code}）；截至最后一次报告的步骤已保留</translation>
    </message>
    <message>
        <source>it ended before recording anything, without a message</source>
        <translation>它在记录任何内容之前就已结束，且没有留下信息</translation>
    </message>
    <message>
        <source>{message}; 1 leftover process killed</source>
        <translation>{message}；已终止 1 个残留进程</translation>
    </message>
    <message>
        <source>{message}; {count} leftover processes killed</source>
        <translation>{message}；已终止 {count} 个残留进程</translation>
    </message>
    <message>
        <source>1 leftover process killed</source>
        <translation>已终止 1 个残留进程</translation>
    </message>
    <message>
        <source>{count} leftover processes killed</source>
        <translation>已终止 {count} 个残留进程</translation>
    </message>
</context>
<context>
    <name>launch_text</name>
    <message>
        <source>starting {count} GPUs, data-parallel (batch {batch_size} split {share} per process); their output: {path}</source>
        <translation>正在启动 {count} 个 GPU 进行数据并行训练（批次 {batch_size} 拆分为每个进程 {share}）；输出位于：{path}</translation>
    </message>
    <message>
        <source>starting {count} CPU processes, data-parallel (batch {batch_size} split {share} per process); their output: {path}</source>
        <translation>正在启动 {count} 个 CPU 进程进行数据并行训练（批次 {batch_size} 拆分为每个进程 {share}）；输出位于：{path}</translation>
    </message>
    <message>
        <source>recording as run {run_id}; followed live in its own window (Runs tab). Stop, Pause and Clear cache act on it</source>
        <translation>已记录为运行 {run_id}；在其独立窗口中实时跟踪（运行记录标签页）。停止、暂停和清空缓存作用于该运行</translation>
    </message>
    <message>
        <source>recording as run {run_id} ({seconds} s after Start); followed live in its own window (Runs tab). Stop, Pause and Clear cache act on it</source>
        <translation>已记录为运行 {run_id}（点击开始后 {seconds} s）；在其独立窗口中实时跟踪（运行记录标签页）。停止、暂停和清空缓存作用于该运行</translation>
    </message>
    <message>
        <source>run {run_id} paused</source>
        <translation>运行 {run_id} 已暂停</translation>
    </message>
    <message>
        <source>run {run_id} resumed</source>
        <translation>运行 {run_id} 已继续</translation>
    </message>
    <message>
        <source>watching {script}, started in {folder}; its output: {path}</source>
        <translation>正在观察 {script}，启动于 {folder}；其输出：{path}</translation>
    </message>
    <message>
        <source>the script&apos;s output is in {path}</source>
        <translation>脚本的输出在 {path}</translation>
    </message>
    <message>
        <source>the script was stopped before its run was recorded</source>
        <translation>脚本在其运行被记录之前就被停止了</translation>
    </message>
    <message>
        <source>the script ended without an optimizer step: there was no training to record</source>
        <translation>脚本结束时没有任何优化器步骤：没有可记录的训练</translation>
    </message>
    <message>
        <source>the script ended before its run was recorded: {reason}</source>
        <translation>脚本在其运行被记录之前就结束了：{reason}</translation>
    </message>
    <message>
        <source>the {count} GPUs were stopped before training started</source>
        <translation>{count} 个 GPU 在训练开始前已停止</translation>
    </message>
    <message>
        <source>the {count} CPU processes were stopped before training started</source>
        <translation>{count} 个 CPU 进程在训练开始前已停止</translation>
    </message>
    <message>
        <source>the {count} GPUs could not start: {reason}</source>
        <translation>{count} 个 GPU 无法启动：{reason}</translation>
    </message>
    <message>
        <source>the {count} CPU processes could not start: {reason}</source>
        <translation>{count} 个 CPU 进程无法启动：{reason}</translation>
    </message>
    <message>
        <source>run {run_id} is no longer in the run store (deleted while it trained, or the store was replaced); its processes have ended (exit code {code})</source>
        <translation>运行 {run_id} 已不在运行记录库中（训练期间被删除，或记录库被替换）；它的进程已结束（退出码 {code}）</translation>
    </message>
    <message>
        <source>run {run_id} {status}: {message}</source>
        <translation>运行 {run_id} {status}：{message}</translation>
    </message>
    <message>
        <source>run {run_id} {status}</source>
        <translation>运行 {run_id} {status}</translation>
    </message>
    <message>
        <source>the processes&apos; output is in {path}</source>
        <translation>这些进程的输出位于 {path}</translation>
    </message>
    <message>
        <source>Stopping the run…</source>
        <translation>正在停止运行…</translation>
    </message>
    <message>
        <source>Stopping {count} GPUs…</source>
        <translation>正在停止 {count} 个 GPU…</translation>
    </message>
    <message>
        <source>Stopping {count} CPU processes…</source>
        <translation>正在停止 {count} 个 CPU 进程…</translation>
    </message>
    <message>
        <source>starting on {host} ({device}), mirrored here as it trains; the link&apos;s output: {path}</source>
        <translation>正在 {host}（{device}）上启动，训练时同步到这里；连接的输出：{path}</translation>
    </message>
    <message>
        <source>the run on {host} was stopped before training started</source>
        <translation>{host} 上的运行在训练开始前被停止</translation>
    </message>
    <message>
        <source>the run on {host} could not start: {reason}</source>
        <translation>{host} 上的运行无法启动：{reason}</translation>
    </message>
    <message>
        <source>watching {script} on {host}, mirrored here as it trains; the link&apos;s output: {path}</source>
        <translation>正在监视 {host} 上的 {script}，训练时同步到这里；连接的输出：{path}</translation>
    </message>
</context>
<context>
    <name>memory_plot</name>
    <message>
        <source>allocated</source>
        <translation>已分配</translation>
    </message>
    <message>
        <source>process RSS</source>
        <translation>进程 RSS</translation>
    </message>
    <message>
        <source>Bytes held by live tensors (torch.cuda.memory_allocated)</source>
        <translation>存活张量占用的字节数（torch.cuda.memory_allocated）</translation>
    </message>
    <message>
        <source>Resident memory of this process (RSS): tensors, code, caches</source>
        <translation>本进程的常驻内存（RSS）：张量、代码、缓存</translation>
    </message>
    <message>
        <source>reserved</source>
        <translation>已保留</translation>
    </message>
    <message>
        <source>Bytes the caching allocator holds from the driver: allocated plus cached free blocks</source>
        <translation>缓存分配器从驱动获取并持有的字节数：已分配加上缓存的空闲块</translation>
    </message>
    <message>
        <source>The CPU has no caching allocator</source>
        <translation>CPU 没有缓存分配器</translation>
    </message>
    <message>
        <source>peak allocated</source>
        <translation>已分配峰值</translation>
    </message>
    <message>
        <source>peak RSS</source>
        <translation>RSS 峰值</translation>
    </message>
    <message>
        <source>Highest allocated since the run started (torch.cuda.max_memory_allocated)</source>
        <translation>自运行开始以来已分配的最高值（torch.cuda.max_memory_allocated）</translation>
    </message>
    <message>
        <source>Highest process RSS since the run started</source>
        <translation>自运行开始以来进程 RSS 的最高值</translation>
    </message>
    <message>
        <source>device used (all processes)</source>
        <translation>设备已用（所有进程）</translation>
    </message>
    <message>
        <source>system used</source>
        <translation>系统已用</translation>
    </message>
    <message>
        <source>Used on the whole GPU per NVML: includes the CUDA context and other processes</source>
        <translation>NVML 报告的整块 GPU 已用量：包括 CUDA 上下文和其他进程</translation>
    </message>
    <message>
        <source>Memory used by every process on this machine</source>
        <translation>本机所有进程使用的内存</translation>
    </message>
    <message>
        <source>capacity</source>
        <translation>总容量</translation>
    </message>
    <message>
        <source>system memory</source>
        <translation>系统内存</translation>
    </message>
    <message>
        <source>Total memory of the device</source>
        <translation>设备的总显存</translation>
    </message>
    <message>
        <source>Total memory of this machine</source>
        <translation>本机的总内存</translation>
    </message>
    <message>
        <source>process limit</source>
        <translation>进程限制</translation>
    </message>
    <message>
        <source>This process&apos;s address-space limit (ulimit -v, RLIMIT_AS). It counts mapped libraries and reservations too, so allocations fail while the RSS is still well below it</source>
        <translation>本进程的地址空间限制（ulimit -v，RLIMIT_AS）。它也计入映射的库和预留空间，因此常驻内存（RSS）还远低于它时分配就可能失败</translation>
    </message>
    <message>
        <source>This process&apos;s data-size limit (ulimit -d, RLIMIT_DATA): its heap and private mappings</source>
        <translation>本进程的数据段大小限制（ulimit -d，RLIMIT_DATA）：它的堆和私有映射</translation>
    </message>
    <message>
        <source>cgroup limit</source>
        <translation>cgroup 限制</translation>
    </message>
    <message>
        <source>The memory limit of this process&apos;s control group (cgroup), shared by every process in it</source>
        <translation>本进程所在控制组（cgroup）的内存限制，组内所有进程共用</translation>
    </message>
</context>
<context>
    <name>plot_export</name>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>SVG image (*.svg)</source>
        <translation>SVG 图像 (*.svg)</translation>
    </message>
    <message>
        <source>Qt could not write the PNG</source>
        <translation>Qt 无法写入 PNG 文件</translation>
    </message>
</context>
<context>
    <name>rank_series</name>
    <message>
        <source>{rank} allocated</source>
        <translation>{rank} 已分配</translation>
    </message>
    <message>
        <source>{rank} RSS</source>
        <translation>{rank} RSS</translation>
    </message>
    <message>
        <source>{rank} reserved</source>
        <translation>{rank} 已保留</translation>
    </message>
    <message>
        <source>{rank} peak</source>
        <translation>{rank} 峰值</translation>
    </message>
    <message>
        <source>{rank} peak RSS</source>
        <translation>{rank} RSS 峰值</translation>
    </message>
    <message>
        <source>rank {rank} ({device})</source>
        <translation>进程 {rank}（{device}）</translation>
    </message>
    <message>
        <source>rank {rank}</source>
        <translation>进程 {rank}</translation>
    </message>
    <message>
        <source>GPU {index}</source>
        <translation>GPU {index}</translation>
    </message>
    <message>
        <source>{device} used (all processes)</source>
        <translation>{device} 已用（所有进程）</translation>
    </message>
    <message>
        <source>system used</source>
        <translation>系统已用</translation>
    </message>
    <message>
        <source>{speeds} img/s</source>
        <translation>{speeds} 图像/秒</translation>
    </message>
    <message>
        <source>{rank}: {speed} images/s</source>
        <translation>{rank}：{speed} 图像/秒</translation>
    </message>
</context>
<context>
    <name>run_checkpoints</name>
    <message>
        <source>end of epoch {epoch}</source>
        <translation>第 {epoch} 轮结束</translation>
    </message>
    <message>
        <source>during epoch {epoch}</source>
        <translation>第 {epoch} 轮期间</translation>
    </message>
    <message>
        <source>asked for, during epoch {epoch}</source>
        <translation>按请求保存，第 {epoch} 轮期间</translation>
    </message>
    <message>
        <source>stopped during epoch {epoch}</source>
        <translation>停止时保存，第 {epoch} 轮期间</translation>
    </message>
    <message>
        <source>last step, during epoch {epoch}</source>
        <translation>最后一步，第 {epoch} 轮期间</translation>
    </message>
    <message>
        <source>step {step} ({why}): {file}</source>
        <translation>第 {step} 步（{why}）：{file}</translation>
    </message>
</context>
<context>
    <name>run_edits</name>
    <message>
        <source>JSON document…</source>
        <translation>JSON 文档…</translation>
    </message>
    <message>
        <source>CSV files (steps, memory)…</source>
        <translation>CSV 文件（步、显存）…</translation>
    </message>
    <message>
        <source>TensorBoard log dir…</source>
        <translation>TensorBoard 日志目录…</translation>
    </message>
    <message>
        <source>run {run} is live: stop it where it runs before deleting it</source>
        <translation>运行 {run} 正在训练：请先在它运行的地方停止它，再删除</translation>
    </message>
</context>
<context>
    <name>run_estimate</name>
    <message>
        <source>no measurement yet for these settings: a finished run gives one</source>
        <translation>这些设置还没有测量数据：完成一次运行后即可得到</translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation>{seconds} 秒</translation>
    </message>
    <message>
        <source>{minutes} min {seconds} s</source>
        <translation>{minutes} 分 {seconds} 秒</translation>
    </message>
    <message>
        <source>{minutes} min</source>
        <translation>{minutes} 分钟</translation>
    </message>
    <message>
        <source>{hours} h {minutes} min</source>
        <translation>{hours} 小时 {minutes} 分钟</translation>
    </message>
    <message>
        <source>{hours} h</source>
        <translation>{hours} 小时</translation>
    </message>
    <message>
        <source>about {duration}</source>
        <translation>约 {duration}</translation>
    </message>
    <message>
        <source>{duration} (from {rate} images/s measured on {device}, plus {startup} start-up)</source>
        <translation>{duration}（依据在 {device} 上测得的 {rate} 图像/秒，另加 {startup}启动时间）</translation>
    </message>
    <message>
        <source>{duration} (from {rate} images/s measured on {device})</source>
        <translation>{duration}（依据在 {device} 上测得的 {rate} 图像/秒）</translation>
    </message>
    <message>
        <source>{duration} (from {rate} tokens/s measured on {device}, plus {startup} start-up)</source>
        <translation>{duration}（依据在 {device} 上测得的 {rate} 词元/秒，另加 {startup}启动时间）</translation>
    </message>
    <message>
        <source>{duration} (from {rate} tokens/s measured on {device})</source>
        <translation>{duration}（依据在 {device} 上测得的 {rate} 词元/秒）</translation>
    </message>
    <message>
        <source>no estimate: the training set&apos;s size is not known yet (set Max steps, or count the folder)</source>
        <translation>无法估计：训练集大小尚不清楚（请设置“最大步数”，或让程序统计文件夹）</translation>
    </message>
</context>
<context>
    <name>run_history</name>
    <message>
        <source>Overlay</source>
        <translation>叠加</translation>
    </message>
    <message>
        <source>Lay this run&apos;s loss and memory over the live plots</source>
        <translation>把此运行的损失和显存叠加到实时图表上</translation>
    </message>
    <message>
        <source>When</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>When the run started (local time)</source>
        <translation>运行开始的时间（本地时间）</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>The run&apos;s id and name</source>
        <translation>运行的编号和名称</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>The machine the run trained on: its host name, after the name you connected to it by for a run copied from another machine</source>
        <translation>运行所在的机器：其主机名；对于从另一台机器复制的运行，前面是你连接它时使用的名称</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>live: training now (in this window or another process); else how it ended</source>
        <translation>训练中：正在训练（在本窗口或其他进程中）；否则为运行的结束方式</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Steps trained (of the steps planned, when it did not train them all)</source>
        <translation>已训练的步数（未训练完全部计划步数时，附计划步数）</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Median training images per second over the run&apos;s reports (the first left out: warm-up); tokens per second for a text run</source>
        <translation>运行各次报告中每秒训练图像数的中位数（第一次报告作为预热不计）；文本运行为每秒词元数</translation>
    </message>
    <message>
        <source>Final loss</source>
        <translation>最终损失</translation>
    </message>
    <message>
        <source>Mean loss of the last report</source>
        <translation>最后一次报告的平均损失</translation>
    </message>
    <message>
        <source>Peak memory</source>
        <translation>峰值占用</translation>
    </message>
    <message>
        <source>Highest allocated memory (on the CPU: process RSS)</source>
        <translation>已分配显存的最高值（在 CPU 上：进程 RSS）</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>备注</translation>
    </message>
</context>
<context>
    <name>run_row_text</name>
    <message>
        <source>live (this window)</source>
        <translation>训练中（本窗口）</translation>
    </message>
    <message>
        <source>live</source>
        <translation>训练中</translation>
    </message>
    <message>
        <source>{device} on {host}</source>
        <translation>{host} 上的 {device}</translation>
    </message>
    <message>
        <source>{alias} ({host})</source>
        <translation>{alias}（{host}）</translation>
    </message>
    <message>
        <source>#{id} {script}: {model} on {device}</source>
        <translation>#{id} {script}：{model}，{device}</translation>
    </message>
    <message>
        <source>#{id} {model} on {device} ({label})</source>
        <translation>#{id} {device} 上的 {model}（{label}）</translation>
    </message>
    <message>
        <source>#{id} {model} on {device}</source>
        <translation>#{id} {device} 上的 {model}</translation>
    </message>
    <message>
        <source>#{id} {name} — {script}</source>
        <translation>#{id} {name} — {script}</translation>
    </message>
    <message>
        <source>{title} — {machine}</source>
        <translation>{title} — {machine}</translation>
    </message>
    <message>
        <source>{script} ({folder})</source>
        <translation>{script}（{folder}）</translation>
    </message>
</context>
<context>
    <name>run_signals</name>
    <message>
        <source>cannot stop the run: {problem}</source>
        <translation>无法停止该运行：{problem}</translation>
    </message>
    <message>
        <source>cannot pause or resume the run: {problem}</source>
        <translation>无法暂停或继续该运行：{problem}</translation>
    </message>
    <message>
        <source>cannot clear the cache of the run: {problem}</source>
        <translation>无法清空该运行的缓存：{problem}</translation>
    </message>
    <message>
        <source>cannot stop run {run_id}: {problem}</source>
        <translation>无法停止运行 {run_id}：{problem}</translation>
    </message>
    <message>
        <source>cannot pause or resume run {run_id}: {problem}</source>
        <translation>无法暂停或继续运行 {run_id}：{problem}</translation>
    </message>
    <message>
        <source>cannot clear the cache of run {run_id}: {problem}</source>
        <translation>无法清空运行 {run_id} 的缓存：{problem}</translation>
    </message>
    <message>
        <source>cannot stop a run in another process here: this system has no {signal}</source>
        <translation>无法在此停止另一进程中的运行：本系统没有 {signal}</translation>
    </message>
    <message>
        <source>cannot pause or resume a run in another process here: this system has no {signal}</source>
        <translation>无法在此暂停或继续另一进程中的运行：本系统没有 {signal}</translation>
    </message>
    <message>
        <source>cannot clear the cache of a run in another process here: this system has no {signal}</source>
        <translation>无法在此清空另一进程中运行的缓存：本系统没有 {signal}</translation>
    </message>
    <message>
        <source>run {run_id} trains on {host}, not on this machine</source>
        <translation>运行 {run_id} 在 {host} 上训练，不在本机</translation>
    </message>
    <message>
        <source>run {run_id} has ended ({status})</source>
        <translation>运行 {run_id} 已结束（{status}）</translation>
    </message>
    <message>
        <source>run {run_id}&apos;s process {pid} is gone</source>
        <translation>运行 {run_id} 的进程 {pid} 已不存在</translation>
    </message>
    <message>
        <source>run {run_id}&apos;s process {pid} was not started by this window</source>
        <translation>运行 {run_id} 的进程 {pid} 不是由本窗口启动的</translation>
    </message>
    <message>
        <source>its process {pid} has just ended</source>
        <translation>其进程 {pid} 刚刚结束</translation>
    </message>
    <message>
        <source>its process {pid} belongs to another user</source>
        <translation>其进程 {pid} 属于另一个用户</translation>
    </message>
    <message>
        <source>its link to {host} has ended</source>
        <translation>它与 {host} 的连接已结束</translation>
    </message>
</context>
<context>
    <name>run_view</name>
    <message>
        <source>not set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Trained by</source>
        <translation>训练者</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Total steps</source>
        <translation>总步数</translation>
    </message>
    <message>
        <source>Script</source>
        <translation>脚本</translation>
    </message>
    <message>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Counted</source>
        <translation>计数</translation>
    </message>
    <message>
        <source>samples</source>
        <translation>样本</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the fields of the logged config</comment>
        <translation>，</translation>
    </message>
</context>
<context>
    <name>status_text</name>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>diverged</source>
        <translation>已发散</translation>
    </message>
    <message>
        <source>out of memory</source>
        <translation>显存不足</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
</context>
<context>
    <name>step_phases</name>
    <message>
        <source>data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>copy</source>
        <translation>拷贝</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>recording</source>
        <translation>记录</translation>
    </message>
    <message>
        <source>input-bound</source>
        <translation>受限于输入</translation>
    </message>
    <message>
        <source>host-bound</source>
        <translation>受限于主机</translation>
    </message>
    <message>
        <source>compute-bound</source>
        <translation>受限于计算</translation>
    </message>
    <message>
        <source>{ms} ms · {percent}%</source>
        <translation>{ms} 毫秒 · {percent}%</translation>
    </message>
    <message>
        <source>{verdict}: {advice}</source>
        <translation>{verdict}：{advice}</translation>
    </message>
    <message>
        <source>{phase} {cell}</source>
        <translation>{phase} {cell}</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the phases of a step</comment>
        <translation>，</translation>
    </message>
</context>
<context>
    <name>stored_run_text</name>
    <message>
        <source>{model}, trained by {source}, {devices} ({device_name})</source>
        <translation>{model}，由{source}训练，{devices}（{device_name}）</translation>
    </message>
    <message>
        <source>{model}, trained by {source}, {devices}</source>
        <translation>{model}，由{source}训练，{devices}</translation>
    </message>
    <message>
        <source>{model} on {dataset}, batch {batch_size}, {placement} placement, {devices} ({device_name})</source>
        <translation>{model}，数据集 {dataset}，批大小 {batch_size}，数据放置 {placement}，{devices}（{device_name}）</translation>
    </message>
    <message>
        <source>{model} on {dataset}, batch {batch_size}, {placement} placement, {devices}</source>
        <translation>{model}，数据集 {dataset}，批大小 {batch_size}，数据放置 {placement}，{devices}</translation>
    </message>
    <message>
        <source>{batch_size} x {seq_len} tokens</source>
        <translation>{batch_size} × {seq_len} 词元</translation>
    </message>
    <message>
        <source>a script this window started and watches</source>
        <translation>本窗口启动并监视的脚本</translation>
    </message>
    <message>
        <source>started by this window as {count} processes</source>
        <translation>由本窗口以 {count} 个进程启动</translation>
    </message>
    <message>
        <source>started by this window</source>
        <translation>由本窗口启动</translation>
    </message>
    <message>
        <source>stop, pause or clear its cache here or with the window&apos;s buttons</source>
        <translation>可在此处或用窗口的按钮停止、暂停或清除其缓存</translation>
    </message>
    <message>
        <source>stop or pause it here or with the window&apos;s buttons</source>
        <translation>可在此处或用窗口的按钮停止或暂停它</translation>
    </message>
    <message>
        <source>{who}: {how}</source>
        <translation>{who}：{how}</translation>
    </message>
    <message>
        <source>{launched}; started {started}</source>
        <translation>{launched}；开始于 {started}</translation>
    </message>
    <message>
        <source>this window&apos;s own run: control it with the window&apos;s Pause and Stop; started {started}</source>
        <translation>本窗口自己的运行：用窗口的“暂停”和“停止”控制它；开始于 {started}</translation>
    </message>
    <message>
        <source>watching run {run_id} started by pid {pid} on {host}: read-only here, pause or stop it where it runs (Ctrl+C in its terminal); started {started}</source>
        <translation>正在查看 {host} 上的进程 {pid} 开始的运行 {run_id}：这里只读，请在它运行的地方暂停或停止它（在其终端中按 Ctrl+C）；开始于 {started}</translation>
    </message>
    <message>
        <source>started {started}, ran {duration}, recorded by pid {pid} on {host}</source>
        <translation>开始于 {started}，运行了 {duration}，由 {host} 上的进程 {pid} 记录</translation>
    </message>
    <message>
        <source>{status} at step {step}: {message}</source>
        <translation>{status}（第 {step} 步）：{message}</translation>
    </message>
    <message>
        <source>{status} at step {step}</source>
        <translation>{status}（第 {step} 步）</translation>
    </message>
    <message>
        <source>checkpoint saved at step {step} ({reason}): {path}</source>
        <translation>在第 {step} 步保存了检查点（{reason}）：{path}</translation>
    </message>
    <message>
        <source>paused at step {step}</source>
        <translation>在第 {step} 步暂停</translation>
    </message>
    <message>
        <source>resumed at step {step}</source>
        <translation>在第 {step} 步继续</translation>
    </message>
</context>
<context>
    <name>throughput_text</name>
    <message>
        <source>images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>Training images per second</source>
        <translation>训练吞吐量（图像/秒）</translation>
    </message>
    <message>
        <source>Images/s (median)</source>
        <translation>图像/秒（中位数）</translation>
    </message>
    <message>
        <source>Median training images per second over the reports after the first (the warm-up): the figure of the run&apos;s end in the log and in the Runs table</source>
        <translation>第一次报告（预热）之后各次报告的训练图像每秒数的中位数：即日志中和“运行”表中该运行结束时的数字</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>Training tokens per second</source>
        <translation>训练吞吐量（词元/秒）</translation>
    </message>
    <message>
        <source>Tokens/s (median)</source>
        <translation>词元/秒（中位数）</translation>
    </message>
    <message>
        <source>Median training tokens per second (sequences x sequence length) over the reports after the first (the warm-up): the figure of the run&apos;s end in the log and in the Runs table</source>
        <translation>第一次报告（预热）之后各次报告的训练词元每秒数（序列数 x 序列长度）的中位数：即日志中和“运行”表中该运行结束时的数字</translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>Training samples per second</source>
        <translation>训练吞吐量（样本/秒）</translation>
    </message>
    <message>
        <source>Samples/s (median)</source>
        <translation>样本/秒（中位数）</translation>
    </message>
    <message>
        <source>Median training samples per second over the reports after the first (the warm-up): the figure of the run&apos;s end in the log and in the Runs table</source>
        <translation>第一次报告（预热）之后各次报告的训练样本每秒数的中位数：即日志中和“运行”表中该运行结束时的数字</translation>
    </message>
</context>
<context>
    <name>watch_command</name>
    <message>
        <source>Choose the script to watch.</source>
        <translation>请选择要观察的脚本。</translation>
    </message>
    <message>
        <source>There is no file {path}.</source>
        <translation>没有文件 {path}。</translation>
    </message>
    <message>
        <source>{path} is a folder, not a script.</source>
        <translation>{path} 是文件夹，不是脚本。</translation>
    </message>
    <message>
        <source>The arguments cannot be split: a quotation mark is not closed.</source>
        <translation>参数无法拆分：有引号没有闭合。</translation>
    </message>
    <message>
        <source>The arguments cannot be split: they end with a lone backslash.</source>
        <translation>参数无法拆分：以单独的反斜杠结尾。</translation>
    </message>
    <message>
        <source>There is no folder {path} to run the script in.</source>
        <translation>没有用于运行脚本的文件夹 {path}。</translation>
    </message>
</context>
<context>
    <name>window_layout</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
</context>
<context>
    <name>window_settings</name>
    <message>
        <source>saved settings could not be used; defaults restored</source>
        <translation>无法使用已保存的设置，已恢复默认值</translation>
    </message>
</context>
</TS>
