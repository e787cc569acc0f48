import type { MessageTable } from './table.js';

/** The how-to-call panel (keys page, models page) and the member's models page. */
export const modelMessages = {
  'nav.models': { 'zh-CN': '模型与价格', en: 'Models' },
  'howToCall.title': { 'zh-CN': '如何调用', en: 'How to call' },
  'howToCall.titleForKey': { 'zh-CN': '用这个密钥调用', en: 'Call with this key' },
  'howToCall.baseUrl': {
    'zh-CN': 'Base URL（OpenAI 兼容，/v1）',
    en: 'Base URL (OpenAI-compatible, /v1)',
  },
  'howToCall.root': {
    'zh-CN': '网关根地址（Anthropic 协议：Claude Code、@anthropic-ai/sdk）',
    en: 'Gateway root (Anthropic Messages: Claude Code, @anthropic-ai/sdk)',
  },
  'howToCall.model': { 'zh-CN': '示例中的模型', en: 'Model in the snippets' },
  'howToCall.noChatModel': {
    'zh-CN': '没有可调用的对话模型：请把示例中的 your-model 换成你的密钥可调用的模型。',
    en: 'No chat model can be called: replace your-model in the snippets with a model your key may call.',
  },
  'howToCall.placeholder': {
    'zh-CN': '示例中的 tgk_… 代表你的密钥（密钥只在创建时显示一次）。',
    en: 'tgk_… in the snippets stands for your key (shown only once, when it is created).',
  },
  'howToCall.idempotencyRule': {
    'zh-CN':
      '幂等规则：每个计费的 POST 请求都带一个新的 Idempotency-Key 请求头。用同一个键重试只会重放第一次的结果，绝不重复扣费；不带它的请求被拒绝（400）。',
    en: 'The idempotency rule: every billed POST carries a new Idempotency-Key header. A retry with the same key replays the first answer and is never charged twice; a POST without one is refused (400).',
  },
  'howToCall.optionalRule': {
    'zh-CN':
      '无法为每个请求发送它的工具（Codex CLI、Claude Code、请求头固定的工具）：创建密钥时勾选“由网关分配”。网关为每个请求分配一个键，并在响应头 Idempotency-Key 中返回；这一选择在密钥有效期内不变。',
    en: 'Tools that cannot send one per request (Codex CLI, Claude Code, tools with fixed headers): tick "the gateway assigns it" when creating the key. The gateway then assigns each request a key and returns it in the Idempotency-Key response header; the choice is fixed for the key’s life.',
  },
  'howToCall.worksAny': {
    'zh-CN':
      '任何密钥都可直接使用（每个请求带新的 Idempotency-Key，示例已带上），网关分配的密钥也可以。',
    en: 'Works unchanged with any key (a new Idempotency-Key per request, as shown), or with a key whose Idempotency-Key the gateway assigns.',
  },
  'howToCall.worksOptional': {
    'zh-CN': '需要“由网关分配 Idempotency-Key”的密钥：此工具无法发送它。',
    en: 'Needs a key whose Idempotency-Key the gateway assigns: this tool cannot send one.',
  },
  'howToCall.keyNotOptional': {
    'zh-CN':
      '这个密钥要求 Idempotency-Key，Codex CLI 和 Claude Code 用不了：请另建一个勾选“由网关分配”的密钥。',
    en: 'This key requires an Idempotency-Key, so Codex CLI and Claude Code cannot use it: create another key with "the gateway assigns it" ticked.',
  },
  'keyOptions.optionalIdempotencyHint': {
    'zh-CN':
      'Codex CLI 和 Claude Code 需要勾选此项；curl 与 OpenAI SDK 两种密钥都能用（它们为每个请求发送新的 Idempotency-Key）。创建后不能更改。',
    en: 'Codex CLI and Claude Code need this ticked; curl and the OpenAI SDKs work with either kind (they send a new Idempotency-Key per request). It cannot be changed later.',
  },
  'howToCall.copySnippet': { 'zh-CN': '复制', en: 'Copy' },
  'howToCall.copiedSnippet': { 'zh-CN': '已复制', en: 'Copied' },
  'howToCall.snippet.curl': { 'zh-CN': 'curl（对话补全）', en: 'curl (chat completions)' },
  'howToCall.snippet.python': { 'zh-CN': 'Python（openai 包）', en: 'Python (openai package)' },
  'howToCall.snippet.javascript': {
    'zh-CN': 'JavaScript（openai 包）',
    en: 'JavaScript (openai package)',
  },
  'howToCall.snippet.codex-config': {
    'zh-CN': 'Codex CLI：~/.codex/config.toml',
    en: 'Codex CLI: ~/.codex/config.toml',
  },
  'howToCall.snippet.codex-run': { 'zh-CN': 'Codex CLI：运行', en: 'Codex CLI: run' },
  'howToCall.snippet.claude-env': {
    'zh-CN': 'Claude Code：环境变量',
    en: 'Claude Code: environment',
  },
  'howToCall.snippet.claude-run': { 'zh-CN': 'Claude Code：运行', en: 'Claude Code: run' },
  'howToCall.more': {
    'zh-CN': '调用示例、各模型的价格与功能：见“模型与价格”页。',
    en: 'Snippets, and each model’s prices and features: see the Models page.',
  },
  'models.title': { 'zh-CN': '模型与价格', en: 'Models and prices' },
  'models.basis.keys': {
    'zh-CN':
      '你的有效密钥可调用的模型（各密钥允许模型的并集；未限制模型的密钥可调用全部），按当前价格版本计价。',
    en: 'The models your usable keys may call (together: a key without a model list may call every model), at their current price version.',
  },
  'models.basis.newKey': {
    'zh-CN': '此账户还没有可用的密钥：下面是新密钥可以被允许调用的全部模型。',
    en: 'This account has no usable key yet: these are all the models a new key may be allowed.',
  },
  'models.none': { 'zh-CN': '没有可调用的模型。', en: 'No model can be called.' },
  'models.families': { 'zh-CN': '接口', en: 'Families' },
  'models.features': { 'zh-CN': '可用的功能组合', en: 'Feature combinations' },
  'models.priceVersion': { 'zh-CN': '价格版本', en: 'Price version' },
  'models.item': { 'zh-CN': '计价项', en: 'Priced' },
  'models.price': { 'zh-CN': '价格', en: 'Price' },
  'models.pricesOf': { 'zh-CN': '{model} 的价格', en: 'Prices of {model}' },
  'models.price.input': { 'zh-CN': '输入，每百万 tokens', en: 'Input, per million tokens' },
  'models.price.cachedInput': {
    'zh-CN': '缓存命中的输入，每百万 tokens',
    en: 'Cached input, per million tokens',
  },
  'models.price.cacheWrite': {
    'zh-CN': '写入缓存（5 分钟）的输入，每百万 tokens',
    en: 'Input written to the cache (5 minutes), per million tokens',
  },
  'models.price.cacheWrite1h': {
    'zh-CN': '写入缓存（1 小时）的输入，每百万 tokens',
    en: 'Input written to the cache (1 hour), per million tokens',
  },
  'models.price.output': { 'zh-CN': '输出，每百万 tokens', en: 'Output, per million tokens' },
  'models.price.reasoning': {
    'zh-CN': '推理，每百万 tokens',
    en: 'Reasoning, per million tokens',
  },
  'models.price.audioInput': {
    'zh-CN': '音频输入，每百万 tokens',
    en: 'Audio input, per million tokens',
  },
  'models.price.imageInput': {
    'zh-CN': '图片输入，每百万 tokens',
    en: 'Image input, per million tokens',
  },
  'models.price.audioOutput': {
    'zh-CN': '音频输出，每百万 tokens',
    en: 'Audio output, per million tokens',
  },
  'models.price.imageOutput': {
    'zh-CN': '图片输出，每百万 tokens',
    en: 'Image output, per million tokens',
  },
  'models.price.perRequest': { 'zh-CN': '每次请求', en: 'Per request' },
  'models.price.inTier': {
    'zh-CN': '{item}（输入超过 {above} tokens 的请求）',
    en: '{item} (requests of more than {above} input tokens)',
  },
  'models.price.inServiceTier': {
    'zh-CN': '{item}（服务等级 {tier}）',
    en: '{item} (service tier {tier})',
  },
  'models.price.inServiceTierAndTier': {
    'zh-CN': '{item}（服务等级 {tier}，输入超过 {above} tokens 的请求）',
    en: '{item} (service tier {tier}, requests of more than {above} input tokens)',
  },
  'models.price.perImage': {
    'zh-CN': '每张图片（{size}，{quality}）',
    en: 'Per image ({size}, {quality})',
  },
  'models.price.perSecond': { 'zh-CN': '每秒视频（{size}）', en: 'Per second of video ({size})' },
  'models.price.perSecondAudio': {
    'zh-CN': '每秒视频，含音频（{size}）',
    en: 'Per second of video with audio ({size})',
  },
  'models.price.h3PerSecond': {
    'zh-CN': '每秒（输入音频 + 输入视频 + 输出，{resolution}）',
    en: 'Per second (input audio + input video + output, {resolution})',
  },
  'models.price.h3PerSecondAudio': {
    'zh-CN': '每秒，生成音频（输入音频 + 输入视频 + 输出，{resolution}）',
    en: 'Per second with generated audio (input audio + input video + output, {resolution})',
  },
  'models.price.perReference': { 'zh-CN': '每张参考图', en: 'Per reference image' },
  'models.price.perReferenceFree': {
    'zh-CN': '每张参考图（前 {free} 张免费）',
    en: 'Per reference image (the first {free} free)',
  },
  'models.feature.none': { 'zh-CN': '纯文本', en: 'Text only' },
  'models.feature.image_input': { 'zh-CN': '图片输入', en: 'Image input' },
  'models.feature.video_input': { 'zh-CN': '视频输入', en: 'Video input' },
  'models.feature.tools': { 'zh-CN': '工具调用', en: 'Tools' },
  'models.feature.thinking': { 'zh-CN': '思考', en: 'Thinking' },
  'models.feature.structured_output': { 'zh-CN': '结构化输出', en: 'Structured output' },
  'models.feature.streaming': { 'zh-CN': '流式输出', en: 'Streaming' },
  'models.family.chat': { 'zh-CN': '对话', en: 'Chat' },
  'models.family.ocr': { 'zh-CN': 'OCR', en: 'OCR' },
  'models.family.embeddings': { 'zh-CN': '向量', en: 'Embeddings' },
  'models.family.rerank': { 'zh-CN': '重排序', en: 'Rerank' },
  'models.family.images': { 'zh-CN': '图片生成', en: 'Images' },
  'models.family.videos': { 'zh-CN': '视频生成', en: 'Videos' },
  'models.family.h3': { 'zh-CN': 'H3 视频', en: 'H3 video' },
} satisfies MessageTable;
