package dev.ratelimit.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Backs the promise of every {@code internal} package's documentation ({@code
 * dev.ratelimit.redis.internal}, {@code dev.ratelimit.core.internal}, {@code
 * dev.ratelimit.servlet.internal}): nothing of it appears in a public signature, so it can change in
 * any release without breaking a user.
 */
public class InternalPackageTest {

    private static final String INTERNAL = "dev.ratelimit..internal";

    /** Public and protected members, superclasses and interfaces of exported types name no internal type. */
    static final ArchRule NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE = classes()
            .that(exported())
            .and()
            .resideOutsideOfPackage(INTERNAL)
            .should(exposeNoInternalType())
            .as("no type of an internal package appears in a public signature of a public type outside it");

    @Test
    @DisplayName("no type of an internal package appears in a public signature outside that package")
    void internalTypesStayOutOfPublicSignatures() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.ratelimit");
        assertThat(classes.containPackage("dev.ratelimit.core.internal")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.servlet.internal")).isTrue();
        NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE.check(classes);
    }

    @Test
    @DisplayName("the rule catches an internal type as a field, a type argument, a parameter and a supertype")
    void ruleCatchesEveryKindOfLeak() {
        assertThatThrownBy(() -> NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE.check(
                        new ClassFileImporter().importClasses(LeakyAdapter.class, LeakyException.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("field " + LeakyAdapter.class.getName() + ".failures")
                .hasMessageContaining("ids()")
                .hasMessageContaining("reconnect(")
                .hasMessageContaining("supertype of " + LeakyException.class.getName());
    }

    @Test
    @DisplayName("private members and package-private types may use internal types")
    void hiddenUseIsAllowed() {
        NO_INTERNAL_TYPE_IN_A_PUBLIC_SIGNATURE.check(new ClassFileImporter().importClasses(Hidden.class));
        assertThat(Hidden.count()).isZero();
    }

    /** A deliberately leaky adapter. */
    public static class LeakyAdapter {

        /** Leaks through a public field. */
        public RedisFailures[] failures = new RedisFailures[0];

        /**
         * Leaks through a type argument of a return type.
         *
         * @return nothing
         */
        public List<KeySpace> ids() {
            return List.of();
        }

        /**
         * Leaks through a parameter.
         *
         * @param ids ignored
         */
        protected void reconnect(Optional<KeySpace> ids) {}
    }

    /** Leaks through its superclass. */
    public abstract static class LeakyException extends Exception implements Comparable<KeySpace> {
        private static final long serialVersionUID = 1L;
    }

    /** Uses internal types only where no user sees them. */
    public static final class Hidden {

        private static final List<KeySpace> IDS = List.of();

        private Hidden() {}

        static int count() {
            return IDS.size();
        }
    }

    private static DescribedPredicate<JavaClass> exported() {
        return DescribedPredicate.describe("are public (and so are their enclosing types)", javaClass -> {
            for (Optional<JavaClass> c = Optional.of(javaClass);
                    c.isPresent();
                    c = c.get().getEnclosingClass()) {
                if (!c.get().getModifiers().contains(JavaModifier.PUBLIC)) {
                    return false;
                }
            }
            return true;
        });
    }

    private static ArchCondition<JavaClass> exposeNoInternalType() {
        return new ArchCondition<>("expose no type of an internal package") {
            @Override
            public void check(JavaClass javaClass, ConditionEvents events) {
                Stream.concat(javaClass.getSuperclass().stream(), javaClass.getInterfaces().stream())
                        .forEach(type -> report(events, javaClass, type, "supertype of " + javaClass.getName()));
                javaClass.getFields().stream()
                        .filter(InternalPackageTest::visible)
                        .forEach(field -> report(events, javaClass, field.getType(), "field " + field.getFullName()));
                for (JavaCodeUnit unit : javaClass.getCodeUnits()) {
                    if (!visible(unit)) {
                        continue;
                    }
                    String where = unit.getFullName();
                    report(events, javaClass, unit.getReturnType(), "return type of " + where);
                    unit.getParameterTypes().forEach(type -> report(events, javaClass, type, "parameter of " + where));
                    unit.getExceptionTypes().forEach(type -> report(events, javaClass, type, "exception of " + where));
                }
            }
        };
    }

    private static boolean visible(JavaMember member) {
        Set<JavaModifier> modifiers = member.getModifiers();
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static void report(ConditionEvents events, JavaClass owner, JavaType type, String where) {
        type.getAllInvolvedRawTypes().stream()
                .map(raw -> raw.isArray() ? raw.getBaseComponentType() : raw)
                .filter(raw -> raw.getPackageName().startsWith("dev.ratelimit.")
                        && raw.getPackageName().endsWith(".internal"))
                .forEach(raw -> events.add(SimpleConditionEvent.violated(
                        owner, raw.getName() + " appears as " + where + " (" + owner.getSource() + ")")));
    }
}
