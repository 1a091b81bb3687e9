// English's indefinite article before a word that the message names (a message type, a property kind): "an audio
// message", "an EMAIL property", "a URL property". The words this product names start with a vowel sound exactly
// when they start with a, e, i or o (none starts with a "u" read as a vowel, as "unread" would be).
export function withArticle(word: string, { capital = false } = {}): string {
  const article = /^[aeio]/i.test(word) ? 'an' : 'a';
  return `${capital ? article[0]?.toUpperCase() + article.slice(1) : article} ${word}`;
}
